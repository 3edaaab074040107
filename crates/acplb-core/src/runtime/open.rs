//! How a session opens: new (`session/new`), loaded with its history replayed
//! (`session/load`) or resumed without it (`session/resume`): the checks (cwd, MCP transports;
//! one already open here is reattached, `reattach.rs`), then off the loop its plugins (on the
//! blocking pool, `start.rs`), its journal and its provider side; once they are done the
//! session's actor starts, its registry entry is written and the request is answered
//! (`opened.rs`).

use std::rc::Rc;
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, LoadSessionResponse, McpServer, ResumeSessionResponse, SessionConfigOption,
    SessionId, SessionModeState,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};

use super::asked::Asked;
use super::durable::{self, Loaded};
use super::fork;
use super::modes;
use super::start::{self, START_LIMIT, Started};
use super::store::Store;
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::plugin::{Pipeline, SessionNotice, SessionStart};
use crate::provider::{ProviderSession, Resume, SessionSetup};
use crate::session::modes::ProviderModes;
use crate::sessions::journal::Journal;

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
    /// The additional directories the request gave (beside the cwd).
    pub(super) directories: Vec<std::path::PathBuf>,
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
        let takes = ClientTakes::of(&self.client);
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
                    client_shows_notices: takes.notices,
                    client_terminal_output: takes.terminal_output,
                    client_compaction: takes.compaction,
                    client_plan_updates: takes.plan_updates,
                    client_subagents: takes.subagents,
                    client_air: takes.air,
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
                let directories = setup.additional_directories.clone();
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
                    directories,
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
}

/// What the client declared it takes, as a session's setup hands it to the provider.
#[expect(
    clippy::struct_excessive_bools,
    reason = "each is one capability the client declared, as `SessionSetup` carries it"
)]
struct ClientTakes {
    notices: bool,
    terminal_output: bool,
    compaction: bool,
    plan_updates: bool,
    subagents: Option<crate::capabilities::SubagentSessions>,
    air: Option<crate::capabilities::Air>,
}

impl ClientTakes {
    fn of(client: &ClientCapabilities) -> Self {
        Self {
            notices: client.session.as_ref().is_some_and(|s| s.notices.is_some()),
            terminal_output: crate::capabilities::terminal_output(client),
            compaction: crate::capabilities::compaction(client),
            plan_updates: crate::capabilities::plan_updates(client),
            subagents: crate::capabilities::subagent_sessions(client),
            air: crate::capabilities::air(client),
        }
    }
}
