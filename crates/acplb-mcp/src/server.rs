//! The MCP face: the tool list and each call — `codex` opens an acplb session on the server
//! this process is the client of and runs a turn, `codex-reply` runs one more (loading the
//! session when another process started it), `codex_threads` and `codex_status` answer from the
//! registry and the server, and the team-mail tools go to acplb-atm's implementation.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use acplb_atm::mcp::AtmServer;
use acplb_core::client::Answers;
use acplb_core::session::options::{MODE, MODEL, REASONING_EFFORT};
use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, DeleteSessionRequest, LoadSessionRequest, NewSessionRequest,
    SessionConfigOptionValue, SessionId, SetSessionConfigOptionRequest,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;

use crate::args::{Reply, Start};
use crate::config::Shared;
use crate::hub::Hub;
use crate::tools;
use crate::turn::{Ended, TurnCall};

/// The threads opened by this process.
pub(crate) type OpenThreads = Arc<Mutex<crate::open::OpenThreads>>;

/// The MCP server.
#[derive(Clone)]
pub(crate) struct CodexMcp {
    pub(crate) cx: ConnectionTo<Agent>,
    pub(crate) hub: Hub,
    pub(crate) answers: Answers,
    pub(crate) open: OpenThreads,
    pub(crate) shared: Arc<Shared>,
    pub(crate) mail: Option<AtmServer>,
    /// `--resume`: the thread the first `codex` call continues.
    pub(crate) resume: Arc<crate::resume::Pending>,
    pub(crate) started: Instant,
}

impl std::fmt::Debug for CodexMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodexMcp").finish_non_exhaustive()
    }
}

pub(crate) fn tool_error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![Content::text(message.into())])
}

impl ServerHandler for CodexMcp {
    fn get_info(&self) -> ServerConfig {
        #[expect(
            deprecated,
            reason = "MCP logging is how warnings reach the client (issue 19)"
        )]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("acplb-codex", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Codex as a tool: `codex` starts a thread and runs one turn, `codex-reply` continues it by `threadId`."
                    .to_owned(),
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = tools::codex_tools();
        if let Some(mail) = &self.mail {
            let listed = mail.list_tools(request, context).await?;
            tools.extend(listed.tools.into_iter().map(tools::annotate_mail));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        let result = match request.name.as_ref() {
            tools::CODEX => self.start(&args, &context).await,
            tools::REPLY => self.reply(&args, &context).await,
            tools::THREADS => crate::threads::list(&self.shared, &args).await,
            tools::STATUS => crate::threads::status(self).await,
            name if name.starts_with("atm_") => match &self.mail {
                Some(mail) => return mail.call_tool(request, context).await,
                None => tool_error(format!(
                    "`{name}`: team mail is off (the composer has no `atm-mail` plugin)"
                )),
            },
            name => tool_error(format!(
                "unknown tool `{name}`; this server has codex, codex-reply, codex_threads, codex_status"
            )),
        };
        Ok(result.into())
    }
}

impl CodexMcp {
    async fn start(&self, args: &JsonObject, context: &RequestContext<RoleServer>) -> CallToolResult {
        let start = match Start::parse(args) {
            Ok(s) => s,
            Err(e) => return tool_error(format!("codex: {e}")),
        };
        if let Some(resumed) = self.resume.take() {
            return self.resumed(&resumed, &start, context).await;
        }
        let cwd = start.cwd.clone().unwrap_or_else(|| self.shared.cwd.clone());
        if let Err(e) = directory(&cwd).await {
            return tool_error(format!("codex: {e}"));
        }
        let session = match self.open_new(&cwd, &start).await {
            Ok(s) => s,
            Err(e) => return tool_error(format!("codex: cannot start a thread in {}: {e}", cwd.display())),
        };
        self.audit(&session, &start.prompt);
        let ended = self
            .turn(context, start.declines(self.shared.never_ask))
            .run(&session, start.prompt.clone())
            .await;
        self.tell_cancelled(context, &session, &ended).await;
        self.let_go();
        if let Some(tag) = start.tag.clone() {
            crate::threads::tag(&self.shared, &session.to_string(), tag).await;
        }
        answer(&session, ended)
    }

    /// The first `codex` call of a server started with `--resume`: the thread goes on, its
    /// summary first.
    async fn resumed(
        &self,
        resumed: &crate::resume::Resumed,
        start: &Start,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let session = match self.ensure_open(&resumed.thread).await {
            Ok(s) => s,
            Err(e) => return tool_error(format!("codex (--resume): {e}")),
        };
        if resumed.summary.is_none() {
            let warning = format!(
                "--resume: thread `{}` has no saved summary; it goes on without one",
                resumed.thread
            );
            self.warn(context, warning).await;
        }
        let unapplied = start.not_for_resumed();
        if !unapplied.is_empty() {
            let warning = format!(
                "--resume: thread `{}` exists already; not applied to it: {}",
                resumed.thread,
                unapplied.join(", ")
            );
            self.warn(context, warning).await;
        }
        self.audit(&session, &start.prompt);
        let prompt = resumed.prompt(&start.prompt);
        let ended = self
            .turn(context, start.declines(self.shared.never_ask))
            .run(&session, prompt)
            .await;
        self.tell_cancelled(context, &session, &ended).await;
        self.let_go();
        answer(&session, ended)
    }

    async fn reply(&self, args: &JsonObject, context: &RequestContext<RoleServer>) -> CallToolResult {
        let reply = match Reply::parse(args) {
            Ok(r) => r,
            Err(e) => return tool_error(format!("codex-reply: {e}")),
        };
        let session = match self.ensure_open(&reply.thread).await {
            Ok(s) => s,
            Err(e) => return tool_error(format!("codex-reply: {e}")),
        };
        self.audit(&session, &reply.prompt);
        let ended = self.turn(context, false).run(&session, reply.prompt).await;
        self.tell_cancelled(context, &session, &ended).await;
        self.let_go();
        answer(&session, ended)
    }

    fn turn<'a>(&'a self, context: &'a RequestContext<RoleServer>, never_ask: bool) -> TurnCall<'a> {
        TurnCall {
            cx: &self.cx,
            hub: &self.hub,
            answers: &self.answers,
            peer: &context.peer,
            progress: context.meta.get_progress_token(),
            cancel: &context.ct,
            limit: self.shared.request_timeout,
            never_ask,
        }
    }

    /// A new session with the call's mode, model and effort.
    async fn open_new(&self, cwd: &Path, start: &Start) -> Result<SessionId, String> {
        let created = self
            .cx
            .send_request(NewSessionRequest::new(cwd).meta(start.meta()))
            .block_task()
            .await
            .map_err(|e| e.message)?;
        let session = created.session_id;
        self.lock_open().used(&session.to_string(), cwd.to_owned());
        let options = [
            (
                MODE,
                start.mode.or(self.shared.default_mode).map(|m| m.id().to_owned()),
            ),
            (MODEL, start.model.clone()),
            (REASONING_EFFORT, start.reasoning_effort.clone()),
        ];
        for (id, value) in options {
            if let Some(value) = value {
                let req = SetSessionConfigOptionRequest::new(
                    session.clone(),
                    id.to_owned(),
                    SessionConfigOptionValue::value_id(value.clone()),
                );
                if let Err(e) = self.cx.send_request(req).block_task().await {
                    self.close(&session).await;
                    return Err(format!("`{id}` = `{value}`: {}", e.message));
                }
            }
        }
        Ok(session)
    }

    /// Deletes a session the call could not set up (a refused model, say), so no thread of it
    /// is left open or listed; where sessions are not kept it is closed instead.
    async fn close(&self, session: &SessionId) {
        self.lock_open().forget(&session.to_string());
        let delete = DeleteSessionRequest::new(session.clone());
        let Err(e) = self.cx.send_request(delete).block_task().await else {
            return;
        };
        tracing::debug!(%session, error = %e.message, "a thread that could not be set up was not deleted; closing it");
        let close = CloseSessionRequest::new(session.clone());
        if let Err(e) = self.cx.send_request(close).block_task().await {
            tracing::warn!(%session, error = %e.message, "cannot close a thread that could not be set up");
        }
    }

    /// The session of `thread`: open here already, else loaded from where acplb keeps it.
    async fn ensure_open(&self, thread: &str) -> Result<SessionId, String> {
        if self.lock_open().contains(thread) {
            self.lock_open().touch(thread);
            return Ok(SessionId::new(thread));
        }
        let Some(cwd) = crate::threads::cwd_of(&self.shared, thread).await? else {
            return Err(format!(
                "unknown thread `{thread}`: no Codex thread of acplb has that id (see `codex_threads`)"
            ));
        };
        let load = LoadSessionRequest::new(SessionId::new(thread), &cwd);
        self.cx
            .send_request(load)
            .block_task()
            .await
            .map_err(|e| format!("cannot continue thread `{thread}`: {}", e.message))?;
        self.lock_open().used(thread, cwd);
        Ok(SessionId::new(thread))
    }

    pub(crate) fn lock_open(&self) -> std::sync::MutexGuard<'_, crate::open::OpenThreads> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes the threads kept open past [`crate::open::KEEP_OPEN`], least recently used and
    /// not in a call first, behind the answer; a later `codex-reply` loads them again.
    fn let_go(&self) {
        let closing = self.lock_open().surplus(|id| self.hub.in_call(id));
        for id in closing {
            let cx = self.cx.clone();
            tokio::spawn(async move {
                let close = CloseSessionRequest::new(SessionId::new(id.as_str()));
                if let Err(e) = cx.send_request(close).block_task().await {
                    tracing::warn!(session = %id, error = %e.message, "cannot close an idle thread");
                }
            });
        }
    }

    /// A cancelled call gets no answer (MCP: a cancelled request is not answered, and rmcp
    /// drops it), so what Codex said so far reaches the caller as a log message, naming the
    /// thread that `codex-reply` continues from there.
    async fn tell_cancelled(&self, context: &RequestContext<RoleServer>, session: &SessionId, ended: &Ended) {
        let Ended::Cancelled { partial } = ended else {
            return;
        };
        let said = if partial.trim().is_empty() {
            "(nothing yet)"
        } else {
            partial.as_str()
        };
        let message = format!(
            "call cancelled; thread `{session}` keeps the turn so far (`codex-reply` continues it); what Codex said so far: {said}"
        );
        self.warn(context, message).await;
    }

    /// A warning to the client's log (MCP logging) and ours.
    async fn warn(&self, context: &RequestContext<RoleServer>, message: String) {
        tracing::warn!("{message}");
        let param = serde_json::from_value(json!({"level": "warning", "logger": "acplb", "data": message}));
        if let Ok(param) = param {
            #[expect(
                deprecated,
                reason = "MCP logging is how the issue asks warnings to reach the client"
            )]
            let sent = context.peer.notify_logging_message(param).await;
            if let Err(e) = sent {
                tracing::debug!(error = %e, "cannot send a log message");
            }
        }
    }

    /// The call in the audit log, off the runtime thread: the thread and the first 200
    /// characters of the prompt, redacted.
    fn audit(&self, session: &SessionId, prompt: &str) {
        let Some(log) = self.shared.audit.clone() else {
            return;
        };
        let (session, prompt) = (session.to_string(), prompt.to_owned());
        tokio::task::spawn_blocking(move || {
            if let Err(e) = log.prompt(&session, Some(&session), &prompt) {
                tracing::warn!(error = %e, "cannot write the audit log");
            }
        });
    }
}

/// `cwd` must be an existing directory.
async fn directory(cwd: &Path) -> Result<(), String> {
    match tokio::fs::metadata(cwd).await {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("`cwd` {} is not a directory", cwd.display())),
        Err(e) => Err(format!("`cwd` {}: {e}", cwd.display())),
    }
}

/// The call's result: the answer as text, and `{threadId, content}` as structured content.
fn answer(session: &SessionId, ended: Ended) -> CallToolResult {
    let thread = session.to_string();
    let (mut result, content) = match ended {
        Ended::Answered { text, notes } => {
            let mut blocks = vec![Content::text(text.clone())];
            blocks.extend(notes.into_iter().map(|n| Content::text(format!("(acplb: {n})"))));
            (CallToolResult::success(blocks), text)
        }
        Ended::Cancelled { partial } => (
            tool_error(format!(
                "cancelled by the caller; what Codex said so far:\n{partial}"
            )),
            partial,
        ),
        Ended::TimedOut { partial, limit } => (
            tool_error(format!(
                "the turn ran past the request time limit of {} s (`--request-timeout`) and was stopped; what Codex said so far:\n{partial}",
                limit.as_secs()
            )),
            partial,
        ),
        Ended::Failed { message, partial } => (
            tool_error(format!(
                "the turn failed: {message} (thread `{thread}`; the next call starts Codex again)"
            )),
            partial,
        ),
    };
    result.structured_content = Some(json!({"threadId": thread, "content": content}));
    result
}
