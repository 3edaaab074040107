//! The runtime loop: owns the session store, answers `initialize` and `session/new`, and
//! routes everything else to the session's actor.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use agent_client_protocol::Client;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommandsUpdate, ClientCapabilities, ContentBlock, ContentChunk,
    Implementation, InitializeRequest, InitializeResponse, McpCapabilities, McpServer, NewSessionRequest,
    NewSessionResponse, Notice, NoticeSeverity, PromptCapabilities, PromptRequest, PromptResponse, SessionId,
    SessionMode, SessionModeState, SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use super::wire_error::reply;
use super::{ServerOptions, wire_error};
use crate::permission::Mode;
use crate::plugin::{PipelineSource, SessionNotice, SessionStart};
use crate::provider::{ProviderAdapter, SessionSettings, SessionSetup};
use crate::session::{SessionActor, SessionMsg, SessionParts};

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
}

struct SessionHandle {
    tx: UnboundedSender<SessionMsg>,
    task: JoinHandle<()>,
}

/// A session whose provider side finished opening (or failed to).
struct Opened {
    session_id: SessionId,
    provider: Result<Box<dyn crate::provider::ProviderSession>, crate::error::ProviderError>,
    pending: PendingSession,
}

/// What `session/new` decided before the provider side opened.
struct PendingSession {
    cwd: std::path::PathBuf,
    pipeline: Rc<crate::plugin::Pipeline>,
    notices: Vec<SessionNotice>,
    responder: Responder<NewSessionResponse>,
    cx: ConnectionTo<Client>,
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
        }
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
        for handle in sessions.values() {
            send(&handle.tx, SessionMsg::Shutdown);
        }
        self.stop_opening(&mut opened).await;
        for (id, handle) in sessions {
            if let Err(e) = handle.task.await {
                tracing::error!(session = %id, error = %e, "session actor ended abnormally");
            }
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
            reply(done.pending.responder.respond_with_error(stopping));
            if let Ok(mut provider) = done.provider {
                provider.shutdown().await;
            }
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Initialize { req, responder } => self.initialize(&req, responder),
            Command::NewSession { req, responder, cx } => self.new_session(req, responder, cx),
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
        let caps = AgentCapabilities::new()
            .load_session(false)
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

    fn new_session(
        &mut self,
        req: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        if let Err(message) = check_cwd(&req.cwd) {
            reply(responder.respond_with_error(wire_error::invalid_params(message)));
            return;
        }
        if let Some(why) = &self.capabilities.refuses_sse_mcp
            && let Some(name) = req.mcp_servers.iter().find_map(|s| match s {
                McpServer::Sse(sse) => Some(sse.name.clone()),
                _ => None,
            })
        {
            let msg = format!("MCP server `{name}` uses SSE, which {why}; use stdio or http");
            reply(responder.respond_with_error(wire_error::invalid_params(msg)));
            return;
        }
        let session_id = SessionId::new(uuid::Uuid::new_v4().to_string());
        let mut start = SessionStart {
            session_id: session_id.to_string(),
            cwd: req.cwd.clone(),
            mcp_servers: req.mcp_servers,
            env: Vec::new(),
            developer_instructions: Vec::new(),
        };
        let (pipeline, notices) = match self.pipelines.for_session(&start.cwd, &start.session_id) {
            Ok(p) => (Rc::new(p.pipeline), p.notices),
            Err(e) => {
                reply(responder.respond_with_error(wire_error::composer(&e)));
                return;
            }
        };
        if let Err(e) = pipeline.on_session_start(&mut start) {
            reply(responder.respond_with_error(wire_error::plugin(&e)));
            return;
        }
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let setup = SessionSetup {
            session_id: start.session_id,
            cwd: start.cwd,
            mcp_servers: start.mcp_servers,
            env: start.env,
            developer_instructions: start.developer_instructions,
            client_shows_notices: shows_notices,
        };
        let pending = PendingSession {
            cwd: req.cwd,
            pipeline,
            notices,
            responder,
            cx,
        };
        // Opening may wait (never for a child to be ready); the store goes on meanwhile.
        let provider = self.provider.clone();
        let done = self.opened_tx.clone();
        let opening_id = session_id.clone();
        let opening = tokio::task::spawn_local(async move {
            let opened = provider.open_session(setup).await;
            let sent = done.send(Opened {
                session_id,
                provider: opened,
                pending,
            });
            if sent.is_err() {
                // The store is gone only when acplb stops; the session is then moot.
                tracing::debug!("a session opened after acplb began to stop; dropped");
            }
        });
        self.opening.insert(opening_id, opening);
    }

    /// The provider side of a new session is open: start its actor and answer `session/new`.
    fn on_opened(&mut self, opened: Opened) {
        let Opened {
            session_id,
            provider,
            pending,
        } = opened;
        self.opening.remove(&session_id);
        let provider = match provider {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(session = %session_id, error = %e, "the provider could not open the session");
                reply(pending.responder.respond_with_error(wire_error::provider(&e)));
                return;
            }
        };
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let settings = SessionSettings::default();
        let catalog = Rc::new(self.capabilities.catalog.clone());
        let modes = SessionModeState::new(
            Mode::default().id(),
            Mode::ALL
                .iter()
                .map(|m| SessionMode::new(m.id(), m.name()).description(catalog.mode_description(*m)))
                .collect::<Vec<_>>(),
        );
        let response = NewSessionResponse::new(session_id.clone())
            .modes(modes)
            .config_options(catalog.options(&settings, Mode::default()));
        let (tx, rx) = unbounded_channel();
        let notice_cx = pending.cx.clone();
        let actor = SessionActor::new(
            session_id.clone(),
            pending.cx,
            SessionParts {
                cwd: pending.cwd.clone(),
                provider,
                catalog,
                pipeline: pending.pipeline,
                settings,
                turn_timeout: self.options.turn_timeout,
            },
        )
        .with_output_flow(self.options.output_flow.clone());
        let task = tokio::task::spawn_local(actor.run(rx));
        tracing::info!(session = %session_id, cwd = %pending.cwd.display(), "session created");
        self.sessions
            .insert(session_id.clone(), SessionHandle { tx, task });
        reply(pending.responder.respond(response));
        // After the response: the client learns the session id from it.
        for notice in pending.notices {
            send_notice(&notice_cx, &session_id, notice, shows_notices);
        }
        if !self.capabilities.commands.is_empty() {
            let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                self.capabilities.commands.clone(),
            ));
            if let Err(e) = notice_cx.send_notification(SessionNotification::new(session_id, update)) {
                tracing::debug!(error = %e, "dropping the command list: the client connection is closed");
            }
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
