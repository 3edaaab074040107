//! The runtime loop: owns the session store, answers `session/list` (`initialize`: `initialize.rs`),
//! `session/close` and `session/delete` (`delete.rs`), opens sessions (`open.rs`: new, load, resume) and routes everything else to
//! the session's actor; stops them all in order.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, ClientCapabilities, CloseSessionRequest, CloseSessionResponse,
    DeleteSessionRequest, DeleteSessionResponse, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, LogoutResponse, NewSessionRequest,
    NewSessionResponse, PromptRequest, PromptResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionId, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use super::ServerOptions;
use super::asked::Asked;
use super::durable;
use super::open::{Opened, Reply};
use crate::error::Reason;
use crate::error::wire;
use crate::error::wire::reply;
use crate::plugin::PipelineSource;
use crate::provider::ProviderAdapter;
use crate::session::SessionMsg;

/// A request, forwarded from the ACP handlers.
#[derive(Debug)]
pub(crate) enum Command {
    Initialize {
        req: Box<InitializeRequest>,
        responder: Responder<InitializeResponse>,
        cx: ConnectionTo<Client>,
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
    Authenticate {
        req: AuthenticateRequest,
        responder: Responder<AuthenticateResponse>,
        cx: ConnectionTo<Client>,
    },
    Logout {
        responder: Responder<LogoutResponse>,
    },
    AuthStatus {
        responder: Responder<agent_client_protocol::v1::schema::AuthStatusResponse>,
    },
    DeleteSession {
        req: DeleteSessionRequest,
        responder: Responder<DeleteSessionResponse>,
    },
    /// `_session/batch_get` (`batch_get.rs`).
    BatchGet {
        req: super::batch_get::BatchGetRequest,
        responder: Responder<super::batch_get::BatchGetResponse>,
    },
    /// `_session/goal` and its legacy name (`goal.rs`).
    Goal {
        req: super::goal::GoalRequest,
        responder: Responder<super::goal::GoalResponse>,
    },
    /// `providers/*`.
    Routing(super::routing::RoutingCall),
    /// `session/fork`, `set_title`, `archive`, `unarchive`, `status` (`shelf.rs`).
    Shelf(super::shelf::ShelfCommand),
    /// Any other request: the TS codex-acp's vendor methods, or the provider's (`vendor.rs`).
    Vendor {
        req: agent_client_protocol::UntypedMessage,
        responder: Responder<serde_json::Value>,
        cx: ConnectionTo<Client>,
    },
}

pub(super) struct SessionHandle {
    pub(super) tx: UnboundedSender<SessionMsg>,
    pub(super) task: JoinHandle<()>,
    /// Whether it asks for a summary when acplb stops (`session-summary`).
    pub(super) summarises: bool,
}

pub(super) struct Store {
    pub(super) provider: Rc<dyn ProviderAdapter>,
    pub(super) pipelines: Arc<dyn PipelineSource>,
    pub(super) options: ServerOptions,
    pub(super) client: ClientCapabilities,
    pub(super) sessions: HashMap<SessionId, SessionHandle>,
    /// The tasks of sessions whose provider side is still opening.
    pub(super) opening: HashMap<SessionId, JoinHandle<()>>,
    pub(super) capabilities: crate::provider::ProviderCapabilities,
    pub(super) opened_tx: UnboundedSender<Opened>,
    pub(super) opened_rx: Option<UnboundedReceiver<Opened>>,
    /// Set when stopping takes summaries (see [`Store::summarising`]).
    pub(super) summarising: Rc<std::cell::Cell<bool>>,
    /// Tells the client when the sign-in changes (`auth_updates.rs`), once it has initialized
    /// and when the provider offers sign-in.
    pub(super) auth_poke: Option<super::auth_updates::AuthPoke>,
    /// The session list watcher of this connection and its subscriptions (`list_watch.rs`).
    pub(super) list_watch: Option<UnboundedSender<super::list_watch::Ask>>,
    pub(super) list_subs: std::collections::HashSet<String>,
    /// The sessions this connection closed last (at most `close::CLOSED_KEPT`): a request naming
    /// one is told it was closed and how to open it again, not only that it is unknown (`close.rs`).
    pub(super) closed: crate::recent::Recent<SessionId>,
}

impl Store {
    pub(super) fn new(
        provider: Rc<dyn ProviderAdapter>,
        pipelines: Arc<dyn PipelineSource>,
        options: ServerOptions,
    ) -> Self {
        let (opened_tx, opened_rx) = unbounded_channel();
        Self {
            capabilities: super::title::with_rename(provider.capabilities()),
            provider,
            pipelines,
            options,
            client: ClientCapabilities::default(),
            sessions: HashMap::new(),
            opening: HashMap::new(),
            opened_tx,
            opened_rx: Some(opened_rx),
            summarising: Rc::default(),
            auth_poke: None,
            list_watch: None,
            list_subs: std::collections::HashSet::new(),
            closed: crate::recent::Recent::new(super::close::CLOSED_KEPT),
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
        // What the sessions told the registry is waited for by `Server::serve`, after this
        // and past the grace if need be (ADR 0062); the writer thread writes it meanwhile.
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
            let stopping = wire::internal(Reason::Stopping, "acplb is stopping; the session was not started");
            done.pending.reply.error(stopping);
            if let Ok(mut parts) = done.result {
                parts.provider.shutdown().await;
            }
        }
    }

    /// `session/cancel`: to the session, or for a subagent's session (ADR 0056) to its
    /// parent's running turn, which stops that child's work.
    fn cancel(&self, session_id: &SessionId) {
        if let Some(h) = self.sessions.get(session_id) {
            send(&h.tx, SessionMsg::Cancel);
        } else if let Some(h) = crate::provider::route::parent_of(&session_id.0)
            .and_then(|parent| self.sessions.get(&SessionId::new(parent)))
        {
            send(&h.tx, SessionMsg::CancelChild(session_id.0.to_string()));
        } else {
            tracing::debug!(session = %session_id, "cancel for an unknown session ignored");
        }
    }

    pub(super) fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Initialize { req, responder, cx } => self.initialize(&req, responder, cx),
            Command::NewSession { req, responder, cx } => {
                let fork_of = match super::fork::requested(req.meta.as_ref()) {
                    Ok(f) => f,
                    Err(e) => return reply(responder.respond_with_error(e)),
                };
                let id = SessionId::new(uuid::Uuid::new_v4().to_string());
                let asked = Asked {
                    system_prompt: req.system_prompt,
                    additional_directories: req.additional_directories,
                };
                self.open(
                    id,
                    req.cwd,
                    req.mcp_servers,
                    asked,
                    Reply::New {
                        responder: super::shelf::NewReply::New(responder),
                        fork_of,
                        meta: req.meta.clone().unwrap_or_default(),
                    },
                    cx,
                );
            }
            Command::LoadSession { req, responder, cx } => {
                let asked = Asked {
                    system_prompt: req.system_prompt,
                    additional_directories: req.additional_directories,
                };
                self.open_earlier(
                    req.session_id,
                    req.cwd,
                    req.mcp_servers,
                    asked,
                    Reply::Load(responder),
                    cx,
                );
            }
            Command::ResumeSession { req, responder, cx } => {
                let asked = Asked {
                    system_prompt: req.system_prompt,
                    additional_directories: req.additional_directories,
                };
                self.open_earlier(
                    req.session_id,
                    req.cwd,
                    req.mcp_servers,
                    asked,
                    Reply::Resume(responder),
                    cx,
                );
            }
            Command::ListSessions { req, responder } => self.list_sessions(req, responder),
            Command::CloseSession { req, responder } => self.close_session(&req.session_id, responder),
            Command::Authenticate { req, responder, cx } => self.authenticate(req, responder, cx),
            Command::Logout { responder } => self.logout(responder),
            Command::AuthStatus { responder } => self.auth_status(responder),
            Command::DeleteSession { req, responder } => self.delete_session(req.session_id, responder),
            Command::BatchGet { req, responder } => self.batch_get(req, responder),
            Command::Goal { req, responder } => self.goal(req, responder),
            Command::Routing(call) => self.routing(call),
            Command::Shelf(cmd) => self.on_shelf(cmd),
            Command::Vendor { req, responder, cx } => self.vendor(req, responder, cx),
            Command::Prompt { req, responder } => self.route_prompt(req, responder),
            Command::Cancel { session_id } => self.cancel(&session_id),
            Command::SetMode { req, responder } => match self.sessions.get(&req.session_id) {
                Some(h) => send(
                    &h.tx,
                    SessionMsg::SetMode {
                        mode_id: req.mode_id,
                        responder,
                    },
                ),
                None => self.unknown(&req.session_id, responder),
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
                None => self.unknown(&req.session_id, responder),
            },
        }
    }

    /// Whether the client declared boolean config options (else toggles are offered as selects).
    pub(super) fn client_takes_booleans(&self) -> bool {
        self.client
            .session
            .as_ref()
            .and_then(|s| s.config_options.as_ref())
            .is_some_and(|c| c.boolean.is_some())
    }

    /// `session/list`: the sessions kept, newest first.
    fn list_sessions(&self, req: ListSessionsRequest, responder: Responder<ListSessionsResponse>) {
        let Some(durability) = self.options.durability.clone() else {
            reply(responder.respond(ListSessionsResponse::new(Vec::new())));
            return;
        };
        tokio::task::spawn_local(async move {
            match durable::list(&durability, req.cwd, req.cursor, req.archived).await {
                Ok(response) => reply(responder.respond(response)),
                Err(e) => reply(responder.respond_with_error(e)),
            }
        });
    }
}

/// Hands a message to an actor; if the actor is gone (it only stops on shutdown, or after a
/// bug), its request is answered with an error that says so, not dropped (a dropped responder
/// makes the SDK answer a bare "Internal error").
pub(super) fn send(tx: &UnboundedSender<SessionMsg>, msg: SessionMsg) {
    if let Err(tokio::sync::mpsc::error::SendError(msg)) = tx.send(msg) {
        tracing::warn!("session actor is gone; request refused");
        msg.refuse("this session has stopped; start a new session");
    }
}
