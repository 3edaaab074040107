//! The runtime loop: owns the session store, answers `initialize` and `session/new`, and
//! routes everything else to the session's actor.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use agent_client_protocol::Client;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommandsUpdate, ClientCapabilities, CloseSessionRequest,
    CloseSessionResponse, ContentBlock, ContentChunk, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    McpServer, NewSessionRequest, NewSessionResponse, Notice, NoticeSeverity, PromptCapabilities,
    PromptRequest, PromptResponse, ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities,
    SessionCloseCapabilities, SessionId, SessionListCapabilities, SessionMode, SessionModeState,
    SessionNotification, SessionResumeCapabilities, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use super::durable;
use super::open::{Opened, OpenedParts, PendingSession, Reply};
use super::wire_error::reply;
use super::{ServerOptions, wire_error};
use crate::permission::Mode;
use crate::plugin::{PipelineSource, SessionNotice, SessionStart};
use crate::provider::{ProviderAdapter, Resume, SessionSettings, SessionSetup};
use crate::session::options::OptionCatalog;
use crate::session::{SessionActor, SessionMsg, SessionParts};
use crate::sessions::journal::{self, Facts};
use crate::sessions::registry::{Entry, Status, Tracked};

/// A request, forwarded from the ACP handlers.
#[derive(Debug)]
pub(crate) enum Command {
    Initialize {
        req: Box<InitializeRequest>,
        responder: Responder<InitializeResponse>,
    },
    NewSession {
        req: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    },
    Prompt {
        req: PromptRequest,
        responder: Responder<PromptResponse>,
    },
    Cancel {
        session_id: SessionId,
    },
    SetMode {
        req: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
    },
    SetConfig {
        req: SetSessionConfigOptionRequest,
        responder: Responder<SetSessionConfigOptionResponse>,
    },
    LoadSession {
        req: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    },
    ResumeSession {
        req: ResumeSessionRequest,
        responder: Responder<ResumeSessionResponse>,
        cx: ConnectionTo<Client>,
    },
    ListSessions {
        req: ListSessionsRequest,
        responder: Responder<ListSessionsResponse>,
    },
    CloseSession {
        req: CloseSessionRequest,
        responder: Responder<CloseSessionResponse>,
    },
}

struct SessionHandle {
    tx: UnboundedSender<SessionMsg>,
    task: JoinHandle<()>,
    /// Whether it asks for a summary when acplb stops (`session-summary`).
    summarises: bool,
}

pub(super) struct Store {
    provider: Rc<dyn ProviderAdapter>,
    pipelines: Rc<dyn PipelineSource>,
    options: ServerOptions,
    client: ClientCapabilities,
    sessions: HashMap<SessionId, SessionHandle>,
    /// The tasks of sessions whose provider side is still opening.
    opening: HashMap<SessionId, JoinHandle<()>>,
    capabilities: crate::provider::ProviderCapabilities,
    opened_tx: UnboundedSender<Opened>,
    opened_rx: Option<UnboundedReceiver<Opened>>,
    /// Set when stopping takes summaries (see [`Store::summarising`]).
    summarising: Rc<std::cell::Cell<bool>>,
}

impl Store {
    pub(super) fn new(
        provider: Rc<dyn ProviderAdapter>,
        pipelines: Rc<dyn PipelineSource>,
        options: ServerOptions,
    ) -> Self {
        let (opened_tx, opened_rx) = unbounded_channel();
        Self {
            capabilities: provider.capabilities(),
            provider,
            pipelines,
            options,
            client: ClientCapabilities::default(),
            sessions: HashMap::new(),
            opening: HashMap::new(),
            opened_tx,
            opened_rx: Some(opened_rx),
            summarising: Rc::default(),
        }
    }

    /// Becomes true when acplb stops and sessions ask for summaries, which may take up to
    /// their limit.
    pub(super) fn summarising(&self) -> Rc<std::cell::Cell<bool>> {
        self.summarising.clone()
    }

    /// Handles commands until every sender is gone, then stops all sessions.
    pub(super) async fn run(mut self, mut rx: UnboundedReceiver<Command>) {
        let Some(mut opened) = self.opened_rx.take() else {
            return;
        };
        loop {
            tokio::select! {
                // Both cancel-safe: a message not taken stays in its channel.
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.on_command(cmd),
                    None => break,
                },
                Some(done) = opened.recv() => self.on_opened(done),
            }
        }
        let sessions = std::mem::take(&mut self.sessions);
        if sessions.values().any(|h| h.summarises) {
            // Summaries may take up to their limit: the server waits that much longer.
            self.summarising.set(true);
        }
        for handle in sessions.values() {
            send(&handle.tx, SessionMsg::Shutdown);
        }
        self.stop_opening(&mut opened).await;
        for (id, handle) in sessions {
            if let Err(e) = handle.task.await {
                tracing::error!(session = %id, error = %e, "session actor ended abnormally");
            }
        }
        if let Some(writer) = self.options.durability.as_ref().and_then(|d| d.registry.as_ref()) {
            // What the sessions told the registry is written before acplb exits.
            writer.flush().await;
        }
        self.provider.shutdown().await;
        tracing::debug!("all sessions stopped");
    }

    /// Sessions still opening when acplb stops: an open still under way is dropped (the
    /// provider cleans up what it started when its future is dropped); one that finished
    /// opening is shut down like any other session. Either way none outlives the provider's
    /// own shutdown, which comes after.
    async fn stop_opening(&mut self, opened: &mut UnboundedReceiver<Opened>) {
        for (id, task) in std::mem::take(&mut self.opening) {
            task.abort();
            // Awaited so the open's future is surely dropped before the provider shuts down.
            if let Err(e) = task.await
                && !e.is_cancelled()
            {
                tracing::error!(session = %id, error = %e, "opening a session ended abnormally");
            }
        }
        // Every open task has ended: whatever they sent is in the channel now.
        while let Ok(done) = opened.try_recv() {
            let stopping = wire_error::internal("acplb is stopping; the session was not started");
            done.pending.reply.error(stopping);
            if let Ok(mut parts) = done.result {
                parts.provider.shutdown().await;
            }
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Initialize { req, responder } => self.initialize(&req, responder),
            Command::NewSession { req, responder, cx } => {
                let id = SessionId::new(uuid::Uuid::new_v4().to_string());
                self.open(id, req.cwd, req.mcp_servers, Reply::New(responder), cx);
            }
            Command::LoadSession { req, responder, cx } => {
                self.open_earlier(
                    req.session_id,
                    req.cwd,
                    req.mcp_servers,
                    Reply::Load(responder),
                    cx,
                );
            }
            Command::ResumeSession { req, responder, cx } => {
                self.open_earlier(
                    req.session_id,
                    req.cwd,
                    req.mcp_servers,
                    Reply::Resume(responder),
                    cx,
                );
            }
            Command::ListSessions { req, responder } => self.list_sessions(req, responder),
            Command::CloseSession { req, responder } => self.close_session(&req.session_id, responder),
            Command::Prompt { req, responder } => match self.sessions.get(&req.session_id) {
                Some(h) => send(&h.tx, SessionMsg::Prompt { req, responder }),
                None => unknown(&req.session_id, responder),
            },
            Command::Cancel { session_id } => {
                if let Some(h) = self.sessions.get(&session_id) {
                    send(&h.tx, SessionMsg::Cancel);
                } else {
                    tracing::debug!(session = %session_id, "cancel for an unknown session ignored");
                }
            }
            Command::SetMode { req, responder } => match self.sessions.get(&req.session_id) {
                Some(h) => send(
                    &h.tx,
                    SessionMsg::SetMode {
                        mode_id: req.mode_id,
                        responder,
                    },
                ),
                None => unknown(&req.session_id, responder),
            },
            Command::SetConfig { req, responder } => match self.sessions.get(&req.session_id) {
                Some(h) => {
                    let id = req.config_id.to_string();
                    send(
                        &h.tx,
                        SessionMsg::SetConfig {
                            id,
                            value: req.value,
                            responder,
                        },
                    );
                }
                None => unknown(&req.session_id, responder),
            },
        }
    }

    fn initialize(&mut self, req: &InitializeRequest, responder: Responder<InitializeResponse>) {
        self.client = req.client_capabilities.clone();
        let sse = self.capabilities.refuses_sse_mcp.is_none();
        let durable = self.options.durability.is_some();
        let mut sessions = SessionCapabilities::new().close(SessionCloseCapabilities::new());
        if durable {
            sessions = sessions
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new());
        }
        let caps = AgentCapabilities::new()
            .load_session(durable)
            .session_capabilities(sessions)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true).sse(sse));
        let version = if req.protocol_version > ProtocolVersion::V1 {
            ProtocolVersion::V1
        } else {
            req.protocol_version
        };
        reply(
            responder.respond(
                InitializeResponse::new(version)
                    .agent_capabilities(caps)
                    .agent_info(Implementation::new(
                        &self.options.agent_name,
                        &self.options.agent_version,
                    )),
            ),
        );
    }

    /// `session/load` or `session/resume` of a session an earlier process kept.
    fn open_earlier(
        &mut self,
        session_id: SessionId,
        cwd: std::path::PathBuf,
        mcp_servers: Vec<McpServer>,
        reply: Reply,
        cx: ConnectionTo<Client>,
    ) {
        if self.options.durability.is_none() {
            reply.error(wire_error::invalid_params(
                "this acplb keeps no sessions (it has no state directory: set ACPLB_STATE_DIR or HOME)",
            ));
            return;
        }
        if self.sessions.contains_key(&session_id) || self.opening.contains_key(&session_id) {
            reply.error(wire_error::invalid_params(format!(
                "session `{session_id}` is already open in this acplb; close it first (session/close)"
            )));
            return;
        }
        self.open(session_id, cwd, mcp_servers, reply, cx);
    }

    /// Opens a session: checks, its plugins, then its journal and provider side off the loop;
    /// [`Store::on_opened`] finishes it. A load or resume reads the session's journal first.
    fn open(
        &mut self,
        session_id: SessionId,
        cwd: std::path::PathBuf,
        mcp_servers: Vec<McpServer>,
        reply: Reply,
        cx: ConnectionTo<Client>,
    ) {
        if let Err(message) = check_cwd(&cwd) {
            reply.error(wire_error::invalid_params(message));
            return;
        }
        if let Some(why) = &self.capabilities.refuses_sse_mcp
            && let Some(name) = mcp_servers.iter().find_map(|s| match s {
                McpServer::Sse(sse) => Some(sse.name.clone()),
                _ => None,
            })
        {
            let msg = format!("MCP server `{name}` uses SSE, which {why}; use stdio or http");
            reply.error(wire_error::invalid_params(msg));
            return;
        }
        let mut start = SessionStart {
            session_id: session_id.to_string(),
            cwd: cwd.clone(),
            mcp_servers,
            env: Vec::new(),
            developer_instructions: Vec::new(),
            identity: None,
        };
        let (pipeline, notices) = match self.pipelines.for_session(&start.cwd, &start.session_id) {
            Ok(p) => (Rc::new(p.pipeline), p.notices),
            Err(e) => {
                reply.error(wire_error::composer(&e));
                return;
            }
        };
        if let Err(e) = pipeline.on_session_start(&mut start) {
            reply.error(wire_error::plugin(&e));
            return;
        }
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let earlier = !matches!(reply, Reply::New(_));
        let mut setup = SessionSetup {
            session_id: start.session_id,
            cwd: start.cwd,
            mcp_servers: start.mcp_servers,
            env: start.env,
            developer_instructions: start.developer_instructions,
            client_shows_notices: shows_notices,
            resume: None,
        };
        let pending = PendingSession {
            cwd,
            pipeline,
            notices,
            reply,
            cx,
            identity: start.identity,
        };
        // Opening may wait (files, never a child being ready); the store goes on meanwhile.
        let provider = self.provider.clone();
        let durability = self.options.durability.clone();
        let done = self.opened_tx.clone();
        let opening_id = session_id.clone();
        let opening = tokio::task::spawn_local(async move {
            let result = async {
                let (journal, loaded) = match (&durability, earlier) {
                    (Some(d), true) => (None, Some(durable::load(d, &setup.session_id).await?)),
                    (Some(d), false) => (durable::create(d, &setup.session_id, &setup.cwd).await, None),
                    (None, _) => (None, None),
                };
                if let Some(loaded) = &loaded {
                    setup.resume = Some(Resume {
                        thread_id: loaded.facts.thread_id.clone(),
                        context: loaded.context.clone(),
                    });
                }
                let provider = provider.open_session(setup).await.map_err(|e| {
                    tracing::warn!(error = %e, "the provider could not open the session");
                    wire_error::provider(&e)
                })?;
                Ok(OpenedParts {
                    provider,
                    journal,
                    loaded,
                })
            }
            .await;
            let sent = done.send(Opened {
                session_id,
                result,
                pending,
            });
            if sent.is_err() {
                // The store is gone only when acplb stops; the session is then moot.
                tracing::debug!("a session opened after acplb began to stop; dropped");
            }
        });
        self.opening.insert(opening_id, opening);
    }

    /// The provider side of a session is open: start its actor, replay its history (a load),
    /// answer the request.
    fn on_opened(&mut self, opened: Opened) {
        let Opened {
            session_id,
            result,
            pending,
        } = opened;
        self.opening.remove(&session_id);
        let parts = match result {
            Ok(p) => p,
            Err(e) => {
                pending.reply.error(e);
                return;
            }
        };
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let catalog = Rc::new(self.capabilities.catalog.clone());
        let mut settings = SessionSettings::default();
        let mut mode = Mode::default();
        let mut entry = Entry::new(
            session_id.to_string(),
            pending.cwd.clone(),
            std::time::SystemTime::now(),
        );
        if let Some(identity) = &pending.identity {
            entry.identity = Some(identity.name.clone());
            entry.team = Some(identity.team.clone());
        }
        let (journal, history, turns) = match parts.loaded {
            Some(loaded) => {
                restore(&catalog, &loaded.facts, &mut settings, &mut mode);
                entry.started_at.clone_from(&loaded.history.started_at);
                entry.title.clone_from(&loaded.facts.title);
                entry.thread_id.clone_from(&loaded.facts.thread_id);
                entry.status = Status::Idle;
                (Some(loaded.journal), Some(loaded.history), loaded.facts.turns)
            }
            None => (parts.journal, None, 0),
        };
        // Indexed only when it is kept: a session without a journal could not be loaded.
        let tracked = journal
            .as_ref()
            .and(self.options.durability.as_ref())
            .and_then(|d| d.registry.clone())
            .map(|writer| Tracked::open(writer, entry));
        let modes = SessionModeState::new(
            mode.id(),
            Mode::ALL
                .iter()
                .map(|m| SessionMode::new(m.id(), m.name()).description(catalog.mode_description(*m)))
                .collect::<Vec<_>>(),
        );
        let options = catalog.options(&settings, mode);
        let (tx, rx) = unbounded_channel();
        let cx = pending.cx.clone();
        let summarises = pending.pipeline.summary_prompt().is_some();
        let actor = SessionActor::new(
            session_id.clone(),
            pending.cx,
            SessionParts {
                cwd: pending.cwd.clone(),
                provider: parts.provider,
                catalog,
                pipeline: pending.pipeline,
                settings,
                mode,
                turns,
                journal: journal.map(Rc::new),
                registry: tracked,
                state_dir: self.options.durability.as_ref().map(|d| d.state_dir.clone()),
                turn_timeout: self.options.turn_timeout,
            },
        )
        .with_output_flow(self.options.output_flow.clone());
        let task = tokio::task::spawn_local(actor.run(rx));
        let how = match pending.reply {
            Reply::New(_) => "session created",
            Reply::Load(_) => "session loaded",
            Reply::Resume(_) => "session resumed",
        };
        tracing::info!(session = %session_id, cwd = %pending.cwd.display(), "{how}");
        self.sessions
            .insert(session_id.clone(), SessionHandle { tx, task, summarises });
        if pending.reply.replays()
            && let Some(history) = &history
        {
            self.replay(&cx, &session_id, history, shows_notices);
        }
        pending.reply.ok(session_id.clone(), modes, options);
        // After the response: the client learns the session id from it.
        for notice in pending.notices {
            send_notice(&cx, &session_id, notice, shows_notices);
        }
        if !self.capabilities.commands.is_empty() {
            let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                self.capabilities.commands.clone(),
            ));
            if let Err(e) = cx.send_notification(SessionNotification::new(session_id, update)) {
                tracing::debug!(error = %e, "dropping the command list: the client connection is closed");
            }
        }
    }

    /// Shows a loaded session's history again, before the answer, as ACP asks: the editor
    /// shows the history, then the session.
    fn replay(
        &self,
        cx: &ConnectionTo<Client>,
        id: &SessionId,
        history: &journal::History,
        shows_notices: bool,
    ) {
        let updates = journal::updates(history, shows_notices);
        tracing::info!(session = %id, updates = updates.len(), "replaying the session's history");
        for update in updates {
            if cx
                .send_notification(SessionNotification::new(id.clone(), update))
                .is_err()
            {
                break;
            }
            self.options.output_flow.sent();
        }
    }

    /// `session/close`: the session's turn is cancelled, its provider side stopped, then the
    /// request is answered; its journal stays for a later load.
    fn close_session(&mut self, id: &SessionId, responder: Responder<CloseSessionResponse>) {
        let Some(handle) = self.sessions.remove(id) else {
            if self.opening.contains_key(id) {
                reply(responder.respond_with_error(wire_error::invalid_params(format!(
                    "session `{id}` is still opening; close it once it has opened"
                ))));
            } else {
                unknown(id, responder);
            }
            return;
        };
        send(&handle.tx, SessionMsg::Close);
        let id = id.clone();
        tokio::task::spawn_local(async move {
            if let Err(e) = handle.task.await {
                tracing::error!(session = %id, error = %e, "session actor ended abnormally");
            }
            tracing::info!(session = %id, "session closed");
            reply(responder.respond(CloseSessionResponse::new()));
        });
    }

    /// `session/list`: the sessions kept, newest first.
    fn list_sessions(&self, req: ListSessionsRequest, responder: Responder<ListSessionsResponse>) {
        let Some(durability) = self.options.durability.clone() else {
            reply(responder.respond(ListSessionsResponse::new(Vec::new())));
            return;
        };
        tokio::task::spawn_local(async move {
            match durable::list(&durability, req.cwd, req.cursor).await {
                Ok(response) => reply(responder.respond(response)),
                Err(e) => reply(responder.respond_with_error(e)),
            }
        });
    }
}

/// Applies what the journal says the session was set to.
fn restore(catalog: &OptionCatalog, facts: &Facts, settings: &mut SessionSettings, mode: &mut Mode) {
    for (id, value) in &facts.settings {
        if let Err(e) = catalog.apply(settings, mode, id, value) {
            tracing::warn!(option = %id, error = %e, "a saved setting no longer applies; left as it is");
        }
    }
}

/// Tells the user something about their new session: a `notice` update when the client shows
/// them, else an agent message (which every editor shows).
fn send_notice(
    cx: &ConnectionTo<Client>,
    session_id: &SessionId,
    notice: SessionNotice,
    shows_notices: bool,
) {
    let update = if shows_notices {
        SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, notice.title).description(notice.detail))
    } else {
        let text = format!("{}.\n\n{}\n\n", notice.title, notice.detail);
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
    };
    if let Err(e) = cx.send_notification(SessionNotification::new(session_id.clone(), update)) {
        tracing::debug!(error = %e, "dropping a notice: the client connection is closed");
    }
}

/// Hands a message to an actor; if the actor is gone (it only stops on shutdown, or after a
/// bug), its request is answered with an error that says so, not dropped (a dropped responder
/// makes the SDK answer a bare "Internal error").
fn send(tx: &UnboundedSender<SessionMsg>, msg: SessionMsg) {
    if let Err(tokio::sync::mpsc::error::SendError(msg)) = tx.send(msg) {
        tracing::warn!("session actor is gone; request refused");
        msg.refuse("this session has stopped; start a new session");
    }
}

fn unknown<T: agent_client_protocol::JsonRpcResponse>(id: &SessionId, responder: Responder<T>) {
    reply(responder.respond_with_error(wire_error::unknown_session(&id.to_string())));
}

fn check_cwd(cwd: &Path) -> Result<(), String> {
    if !cwd.is_absolute() {
        return Err(format!("cwd `{}` must be an absolute path", cwd.display()));
    }
    match std::fs::metadata(cwd) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("cwd `{}` is not a directory", cwd.display())),
        Err(e) => Err(format!("cwd `{}` is not accessible: {e}", cwd.display())),
    }
}
