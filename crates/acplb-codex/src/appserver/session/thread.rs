//! The session's Codex thread on the running server: adopted from the early start, continued,
//! resumed on a newer server (`thread/resume`), forked from the source session's thread
//! (`thread/fork`), or started (`thread/start`); a thread that cannot be resumed or forked is
//! replaced by a new one that starts from what was said before, with a notice.

use acplb_core::error::ProviderError;
use acplb_core::permission::Mode;
use acplb_core::provider::{SessionSettings, SessionSink, TurnRequest};
use serde_json::{Value, json};

use super::turn::call;
use super::{AppSession, Found, Thread};
use super::{ContentBlock, ContentChunk, SessionUpdate};
use crate::appserver::config;
use crate::appserver::protocol::Request as _;
use crate::appserver::protocol::requests::{ThreadFork, ThreadResume, ThreadStart};
use crate::appserver::rpc::RpcFailure;
use crate::appserver::server::Conn;
use crate::caller::Caller;
use crate::prepare::developer_instructions;
use crate::transcript::Transcript;

/// How many messages about background commands and subagents may wait between turns for the
/// session's task (it takes them at once; past it they are dropped).
const IDLE_ROOM: usize = 1024;

/// How the thread is opened when the session has none on the running server.
enum Opening {
    Resume(String),
    Fork(String),
    Start,
}

impl AppSession {
    /// `thread/start` (and `thread/resume`, `thread/fork`) params for this session.
    pub(super) fn thread_params(
        &self,
        mode: Mode,
        settings: &SessionSettings,
        turn_instructions: &[String],
    ) -> Result<ThreadStart, ProviderError> {
        let caller = Caller::of(&self.setup)?;
        // The client's overrides first: the session's MCP servers and environment win.
        let mut config = caller.config.clone();
        config.extend(
            config::thread_config(&self.setup.mcp_servers, &self.setup.env)
                .map_err(ProviderError::Prepare)?,
        );
        if let Some(gateway) = &self.gateway {
            config.extend(gateway.thread_config());
        }
        Ok(ThreadStart {
            cwd: self.setup.cwd.clone(),
            approval_policy: config::approval_policy(mode),
            sandbox: config::sandbox_mode(mode, settings),
            config,
            developer_instructions: developer_instructions(
                &self.server.options().overrides,
                caller.developer_instructions.as_deref(),
                &self.setup.developer_instructions,
                turn_instructions,
            ),
            base_instructions: caller.base_instructions,
            model: settings.model.clone(),
        })
    }

    /// The thread started when the session opened, if it is on the running server.
    async fn adopt_early(&mut self, conn: &Conn, transcript: &mut Transcript) -> bool {
        let Some(handle) = self.early.as_mut() else {
            return false;
        };
        // Awaited by reference: a cancel here leaves the start to finish for the next turn.
        let early = handle.await.ok().flatten();
        self.early = None;
        let Some(early) = early.filter(|e| e.generation == conn.generation) else {
            return false;
        };
        transcript.record(
            true,
            || json!({ "method": ThreadStart::METHOD, "params": early.request }),
        );
        transcript.record(
            false,
            || json!({ "method": ThreadStart::METHOD, "result": early.result }),
        );
        if let Some(model) = early.result.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        self.known_thread = Some(early.id.clone());
        self.thread = Some(Thread {
            id: early.id,
            generation: early.generation,
            inbox: early.inbox,
        });
        true
    }

    /// The thread on the running server: started, forked, or resumed when the server is newer
    /// than the thread.
    pub(super) async fn thread(
        &mut self,
        conn: &Conn,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        transcript: &mut Transcript,
    ) -> Result<Found, ProviderError> {
        if self
            .thread
            .as_ref()
            .is_some_and(|t| t.generation == conn.generation)
        {
            return Ok(Found::Continued);
        }
        if self.thread.is_none() && self.known_thread.is_none() && self.adopt_early(conn, transcript).await {
            if let Some(id) = &self.known_thread {
                sink.thread_started(id);
            }
            self.follow(conn);
            return Ok(Found::Early);
        }
        if let Some(old) = self.thread.take() {
            self.known_thread = Some(old.id);
            // The old server's commands stopped with it.
            let mut out = Vec::new();
            self.background.borrow_mut().stop_all(
                agent_client_protocol::v1::schema::ToolCallStatus::Failed,
                "Codex's server stopped, and this command with it.",
                crate::appserver::decode::TaskEnd::Failed,
                &mut out,
            );
            // So did the subagents the last turn left working.
            if let Some(mut parked) = self.parked.borrow_mut().take() {
                parked.close_open("Codex's server stopped, and this subagent with it.", &mut out);
                self.announced = parked.announced();
            }
            for update in out {
                sink.update(update);
            }
        }
        let opening = match (self.known_thread.clone(), self.fork_from.clone()) {
            (Some(id), _) => Opening::Resume(id),
            (None, Some(source)) => Opening::Fork(source),
            (None, None) => Opening::Start,
        };
        let params = self.thread_params(turn.mode, &turn.settings, &turn.developer_instructions)?;
        let result = match opening {
            Opening::Resume(id) => self.resume(conn, &id, params, turn, sink, transcript).await?,
            Opening::Fork(source) => self.fork(conn, &source, params, turn, sink, transcript).await?,
            Opening::Start => call(&conn.rpc, transcript, &params)
                .await
                .map_err(|f| self.failed(&f))?,
        };
        let id = result
            .pointer("/thread/id")
            .and_then(Value::as_str)
            .ok_or_else(|| ProviderError::turn_failed("codex app-server started a thread without an id"))?
            .to_owned();
        if let Some(model) = result.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        let inbox = conn.rpc.subscribe(&id);
        sink.thread_started(&id);
        self.known_thread = Some(id.clone());
        self.thread = Some(Thread {
            id,
            generation: conn.generation,
            inbox,
        });
        self.follow(conn);
        Ok(Found::Started)
    }

    /// Follows the commands and subagents this session's turns leave running on `conn`'s
    /// server between turns (the router hands their news to a task of the session's).
    fn follow(&mut self, conn: &Conn) {
        let Some(thread) = &self.thread else {
            return;
        };
        let (tx, rx) = tokio::sync::mpsc::channel(IDLE_ROOM);
        self.idle = Some(tx.clone());
        conn.rpc.follow_idle(&thread.id, tx);
        self.background.borrow_mut().watch_stops(conn.rpc.stops());
        if let Some(old) = self.follower.take() {
            old.abort();
        }
        let follower = super::follower::Follower {
            background: self.background.clone(),
            parked: self.parked.clone(),
            rpc: std::rc::Rc::downgrade(&conn.rpc),
            updates: self.updates.clone(),
            editor: self.editor.clone(),
        };
        self.follower = Some(super::follower::follow(follower, rx));
    }

    /// `thread/resume` of thread `id` (`excludeTurns`: acplb already showed the history); a
    /// new thread, from the saved context when there is one, when Codex cannot resume it.
    async fn resume(
        &mut self,
        conn: &Conn,
        id: &str,
        params: ThreadStart,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        transcript: &mut Transcript,
    ) -> Result<Value, ProviderError> {
        let resume = ThreadResume {
            settings: params.clone(),
            thread_id: id.to_owned(),
            exclude_turns: true,
        };
        match call(&conn.rpc, transcript, &resume).await {
            Ok(result) => {
                tracing::info!(session = %self.setup.session_id, thread = %id, "codex thread resumed");
                self.fallback = None;
                Ok(result)
            }
            Err(RpcFailure::Gone(gone)) => Err(self.gone_error(&gone)),
            Err(failure) => {
                tracing::warn!(thread = %id, error = %failure, "resuming the codex thread failed; starting a new one");
                let why = format!("Codex could not resume this conversation ({failure})");
                self.start_over(conn, params, turn, sink, transcript, &why).await
            }
        }
    }

    /// `thread/fork` of the source session's thread `source`: a new thread with the source's
    /// history. When Codex cannot fork it (another `CODEX_HOME`, a deleted rollout), a new
    /// thread starts from the source's summary or digest instead.
    async fn fork(
        &mut self,
        conn: &Conn,
        source: &str,
        params: ThreadStart,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        transcript: &mut Transcript,
    ) -> Result<Value, ProviderError> {
        let fork = ThreadFork {
            settings: params.clone(),
            thread_id: source.to_owned(),
            exclude_turns: true,
        };
        // Kept until it worked or was given up: a server that died meanwhile forks next time.
        let result = match call(&conn.rpc, transcript, &fork).await {
            Ok(result) => {
                tracing::info!(session = %self.setup.session_id, source = %source, "codex thread forked");
                self.fallback = None;
                Ok(result)
            }
            Err(RpcFailure::Gone(gone)) => return Err(self.gone_error(&gone)),
            Err(failure) => {
                tracing::warn!(source = %source, error = %failure, "forking the codex thread failed; starting a new one");
                let why = format!("Codex could not fork the earlier conversation ({failure})");
                self.start_over(conn, params, turn, sink, transcript, &why).await
            }
        };
        self.fork_from = None;
        result
    }

    /// A new thread in place of one that could not be resumed or forked: it starts from the
    /// saved context when there is one, and a notice says so (`why` begins it).
    async fn start_over(
        &mut self,
        conn: &Conn,
        params: ThreadStart,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        transcript: &mut Transcript,
        why: &str,
    ) -> Result<Value, ProviderError> {
        let (params, text) = match self.fallback.take() {
            Some(context) => {
                self.setup.developer_instructions.push(context);
                let params = self.thread_params(turn.mode, &turn.settings, &turn.developer_instructions)?;
                let text = format!(
                    "{why}; it continues in a new thread that starts from a summary of the earlier turns."
                );
                (params, text)
            }
            None => (
                params,
                format!("{why}; it continues in a new thread without the earlier turns."),
            ),
        };
        notify(sink, self.setup.client_shows_notices, &text);
        call(&conn.rpc, transcript, &params)
            .await
            .map_err(|f| self.failed(&f))
    }
}

/// A notice to the user: a `notice` update where the client shows them, else a message.
pub(super) fn notify(sink: &dyn SessionSink, notices: bool, text: &str) {
    let update = if notices {
        SessionUpdate::Notice(agent_client_protocol::v1::schema::Notice::new(
            agent_client_protocol::v1::schema::NoticeSeverity::Warning,
            text,
        ))
    } else {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n\n"))))
    };
    sink.update(update);
}
