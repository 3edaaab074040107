//! How a session opens: new (`session/new`), loaded with its history replayed
//! (`session/load`) or resumed without it (`session/resume`): the checks (cwd, MCP transports;
//! one already open here is reattached, `reattach.rs`), then off the loop its plugins (on the
//! blocking pool, `start.rs`), its journal and its provider side; the session's actor starts,
//! its registry entry is written and the request answered once they are done.

use std::rc::Rc;
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, ContentChunk, LoadSessionResponse, McpServer, Notice,
    NoticeSeverity, ResumeSessionResponse, SessionConfigOption, SessionId, SessionModeState,
    SessionNotification, SessionUpdate,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::asked::Asked;
use super::durable::{self, Loaded};
use super::fork;
use super::modes;
use super::start::{self, START_LIMIT, Started};
use super::store::{SessionHandle, Store};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::plugin::{Pipeline, SessionNotice, SessionStart};
use crate::provider::{ProviderSession, Resume, SessionSetup};
use crate::session::modes::ProviderModes;
use crate::session::options::OptionCatalog;
use crate::session::sink::send_counted;
use crate::session::{Inbox, SessionActor, SessionMsg, SessionParts};
use crate::sessions::journal::{self, Journal};
use crate::sessions::registry::{Entry, Status, Tracked};

/// The request a session is opened for, and how it is answered.
#[derive(Debug)]
pub(super) enum Reply {
    /// `session/new` (or `session/fork`), forking the kept session `fork_of` when set.
    New {
        responder: super::shelf::NewReply,
        fork_of: Option<String>,
        /// The request's `_meta`, for the provider.
        meta: serde_json::Map<String, serde_json::Value>,
    },
    Load(Responder<LoadSessionResponse>),
    Resume(Responder<ResumeSessionResponse>),
}

impl Reply {
    pub(super) fn error(self, error: agent_client_protocol::Error) {
        match self {
            Reply::New { responder, .. } => responder.error(error),
            Reply::Load(r) => reply(r.respond_with_error(error)),
            Reply::Resume(r) => reply(r.respond_with_error(error)),
        }
    }

    pub(super) fn ok(self, id: SessionId, modes: SessionModeState, options: Vec<SessionConfigOption>) {
        match self {
            Reply::New { responder, .. } => responder.ok(id, modes, options),
            Reply::Load(r) => {
                reply(r.respond(LoadSessionResponse::new().modes(modes).config_options(options)));
            }
            Reply::Resume(r) => {
                reply(r.respond(ResumeSessionResponse::new().modes(modes).config_options(options)));
            }
        }
    }

    /// Whether the history is shown again before the answer.
    pub(super) fn replays(&self) -> bool {
        matches!(self, Reply::Load(_))
    }
}

/// What the loop decided before the session's plugins and provider side opened.
#[derive(Debug)]
pub(super) struct PendingSession {
    pub(super) cwd: std::path::PathBuf,
    pub(super) reply: Reply,
    pub(super) cx: ConnectionTo<Client>,
}

/// What opening produced.
pub(super) struct OpenedParts {
    pub(super) provider: Box<dyn ProviderSession>,
    pub(super) journal: Option<Journal>,
    /// The earlier session, for a load or resume.
    pub(super) loaded: Option<Loaded>,
    pub(super) pipeline: Rc<Pipeline>,
    pub(super) notices: Vec<SessionNotice>,
    /// The provider's own modes as the opening knew them (`modes.rs`).
    pub(super) modes: ProviderModes,
    /// Who the session is in an agent team, if a plugin claimed an identity.
    pub(super) identity: Option<crate::plugin::TeamIdentity>,
}

/// A session whose opening finished (or failed).
pub(super) struct Opened {
    pub(super) session_id: SessionId,
    pub(super) result: Result<OpenedParts, agent_client_protocol::Error>,
    pub(super) pending: PendingSession,
}

impl Store {
    /// `session/load` or `session/resume` of a session an earlier process kept.
    pub(super) fn open_earlier(
        &mut self,
        session_id: SessionId,
        cwd: std::path::PathBuf,
        mcp_servers: Vec<McpServer>,
        asked: Asked,
        reply: Reply,
        cx: ConnectionTo<Client>,
    ) {
        if self.options.durability.is_none() {
            reply.error(wire::invalid_params(
                Reason::NotKept,
                "this acplb keeps no sessions (it has no state directory: set ACPLB_STATE_DIR or HOME)",
            ));
            return;
        }
        if self.sessions.contains_key(&session_id) {
            self.reattach(session_id, &cwd, reply, cx);
            return;
        }
        if self.opening.contains_key(&session_id) {
            reply.error(wire::invalid_params(
                Reason::SessionOpening,
                format!(
                    "session `{session_id}` is still opening in this acplb; try again once it has opened"
                ),
            ));
            return;
        }
        self.open(session_id, cwd, mcp_servers, asked, reply, cx);
    }

    /// Opens a session: checks, then its plugins (on the blocking pool), its journal and its
    /// provider side off the loop; [`Store::on_opened`] finishes it. A load or resume reads the
    /// session's journal first.
    pub(super) fn open(
        &mut self,
        session_id: SessionId,
        cwd: std::path::PathBuf,
        mcp_servers: Vec<McpServer>,
        asked: Asked,
        reply: Reply,
        cx: ConnectionTo<Client>,
    ) {
        if let Err(e) = self.check_request(&cwd, &mcp_servers, &reply) {
            reply.error(e);
            return;
        }
        let asked = match asked.check() {
            Ok(checked) => checked,
            Err(e) => return reply.error(e),
        };
        let start = SessionStart {
            session_id: session_id.to_string(),
            cwd: cwd.clone(),
            mcp_servers,
            env: Vec::new(),
            developer_instructions: Vec::new(),
            identity: None,
        };
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let terminal_output = crate::capabilities::terminal_output(&self.client);
        let compaction = crate::capabilities::compaction(&self.client);
        let earlier = !matches!(reply, Reply::New { .. });
        let (fork_of, meta) = match &reply {
            Reply::New { fork_of, meta, .. } => (fork_of.clone(), meta.clone()),
            _ => (None, serde_json::Map::new()),
        };
        let pending = PendingSession { cwd, reply, cx };
        // Opening may wait (files, never a child being ready); the store goes on meanwhile.
        let (provider, pipelines) = (self.provider.clone(), Arc::clone(&self.pipelines));
        let durability = self.options.durability.clone();
        let done = self.opened_tx.clone();
        let opening_id = session_id.clone();
        let initial_mode = self.capabilities.catalog.initial_mode.clone();
        let opening = tokio::task::spawn_local(async move {
            let result = async {
                // Its plugins first: finding, building and starting them reads and locks files.
                let Started { plugins, mut start } = start::plugins(pipelines, start, START_LIMIT).await?;
                let identity = start.identity.take();
                let mut setup = SessionSetup {
                    session_id: start.session_id,
                    cwd: start.cwd,
                    mcp_servers: start.mcp_servers,
                    env: start.env,
                    developer_instructions: start.developer_instructions,
                    additional_directories: asked.directories,
                    client_shows_notices: shows_notices,
                    client_terminal_output: terminal_output,
                    client_compaction: compaction,
                    resume: None,
                    fork: None,
                    meta,
                };
                // The client's system prompt after what plugins added.
                setup.developer_instructions.extend(asked.instructions);
                // A new session's journal is created once its plugins accepted it, before its
                // provider side opens (ADR 0012: a folder and a file on a local disk take
                // microseconds, like each journal line); a fork's once its source is known to be
                // there; an earlier session's is read back on the blocking pool.
                let kept = provider.kept_meta(&setup.meta);
                let (journal, loaded) = match (&durability, earlier, &fork_of) {
                    (Some(d), true, _) => (None, Some(durable::load(d, &setup.session_id).await?)),
                    (Some(d), false, Some(source)) => {
                        setup.fork = Some(fork::source(d, source).await?);
                        tracing::info!(session = %setup.session_id, source = %source, "the new session forks a kept one");
                        (durable::create(d, &setup.session_id, &setup.cwd, kept), None)
                    }
                    (Some(d), false, None) => (durable::create(d, &setup.session_id, &setup.cwd, kept), None),
                    (None, ..) => (None, None),
                };
                if let Some(loaded) = &loaded {
                    setup.resume = Some(Resume {
                        thread_id: loaded.facts.thread_id.clone(),
                        context: loaded.context.clone(),
                    });
                    // What the client that opened it asked of the provider goes on too.
                    setup.meta = provider.kept_meta(&loaded.history.meta);
                }
                let provider = provider.open_session(setup).await.map_err(|e| {
                    tracing::warn!(error = %e, "the provider could not open the session");
                    wire::provider(&e)
                })?;
                // The mode it opens in may be one the provider is still listing.
                let modes = modes::at_opening(provider.as_ref(), loaded.as_ref(), initial_mode).await;
                Ok(OpenedParts {
                    provider,
                    journal,
                    loaded,
                    pipeline: Rc::new(plugins.pipeline),
                    notices: plugins.notices,
                    modes,
                    identity,
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

    /// The options a session offers: what its provider learned while opening, else what the
    /// provider offers any session, as this client takes them.
    fn session_catalog(&self, provider: &dyn ProviderSession, modes: &ProviderModes) -> Rc<OptionCatalog> {
        let offered = provider
            .catalog()
            .unwrap_or_else(|| self.capabilities.catalog.clone());
        Rc::new(OptionCatalog {
            booleans: self.client_takes_booleans(),
            provider_modes: modes.listed(),
            ..offered
        })
    }

    /// The provider side of a session is open: start its actor, replay its history (a load),
    /// answer the request.
    pub(super) fn on_opened(&mut self, opened: Opened) {
        let Opened {
            session_id,
            result,
            pending,
        } = opened;
        self.opening.remove(&session_id);
        let mut parts = match result {
            Ok(p) => p,
            Err(e) => {
                pending.reply.error(e);
                return;
            }
        };
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let catalog = self.session_catalog(parts.provider.as_ref(), &parts.modes);
        let facts = parts.loaded.as_ref().map(|l| &l.facts);
        let (settings, mode) = modes::settle(&catalog, facts, &parts.modes, &mut parts.notices);
        let mut entry = Entry::new(
            session_id.to_string(),
            pending.cwd.clone(),
            std::time::SystemTime::now(),
        );
        if let Some(identity) = &parts.identity {
            entry.identity = Some(identity.name.clone());
            entry.team = Some(identity.team.clone());
        }
        let (journal, history, turns) = match parts.loaded {
            Some(loaded) => {
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
        let modes = catalog.modes(&settings, mode);
        let options = catalog.options(&settings, mode);
        let (tx, rx) = unbounded_channel();
        let cx = pending.cx.clone();
        let summarises = parts.pipeline.summary_prompt().is_some();
        let inbox = self.inbox(journal.is_some(), &session_id, &tx, shows_notices);
        let actor =
            SessionActor::new(
                session_id.clone(),
                pending.cx,
                SessionParts {
                    cwd: pending.cwd.clone(),
                    provider: parts.provider,
                    catalog,
                    pipeline: parts.pipeline,
                    settings,
                    mode,
                    turns,
                    journal: journal.map(Rc::new),
                    registry: tracked,
                    state_dir: self.options.durability.as_ref().map(|d| d.state_dir.clone()),
                    turn_timeout: self.options.turn_timeout,
                    inbox,
                    forms: self.client.elicitation.as_ref().is_some_and(
                        agent_client_protocol::v1::schema::ElicitationCapabilities::supports_form,
                    ),
                },
            )
            .with_output_flow(self.options.output_flow.clone());
        let task = tokio::task::spawn_local(actor.run(rx));
        let how = match pending.reply {
            Reply::New { fork_of: None, .. } => "session created",
            Reply::New { fork_of: Some(_), .. } => "session forked",
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
        let flow = &self.options.output_flow;
        for notice in parts.notices {
            let update = notice_update(notice, shows_notices);
            send_counted(&cx, flow, SessionNotification::new(session_id.clone(), update));
        }
        if !self.capabilities.commands.is_empty() {
            let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                self.capabilities.commands.clone(),
            ));
            send_counted(&cx, flow, SessionNotification::new(session_id, update));
        }
    }

    /// A kept session's input queue (ADR 0013), watched while it is open here.
    fn inbox(
        &self,
        kept: bool,
        id: &SessionId,
        mailbox: &UnboundedSender<SessionMsg>,
        shows_notices: bool,
    ) -> Option<Inbox> {
        let durability = self.options.durability.as_ref().filter(|_| kept)?;
        Some(Inbox::start(
            durability.state_dir.clone(),
            id.to_string(),
            mailbox,
            shows_notices,
        ))
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
        let terminals = crate::capabilities::terminal_output(&self.client);
        let mut updates = journal::updates(history, shows_notices, terminals);
        if !crate::capabilities::compaction(&self.client) {
            updates = journal::without_compaction(updates, shows_notices);
        }
        tracing::info!(session = %id, updates = updates.len(), "replaying the session's history");
        for update in updates {
            send_counted(
                cx,
                &self.options.output_flow,
                SessionNotification::new(id.clone(), update),
            );
        }
    }
}

/// Something to tell the user about their new session: a `notice` update when the client shows
/// them, else an agent message (which every editor shows).
fn notice_update(notice: SessionNotice, shows_notices: bool) -> SessionUpdate {
    if shows_notices {
        SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, notice.title).description(notice.detail))
    } else {
        let text = format!("{}.\n\n{}\n\n", notice.title, notice.detail);
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
    }
}
