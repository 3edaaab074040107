//! ACP's unstable session methods beside `session/new` (ADR 0036): `session/fork` (a new
//! session forking a kept one, as `_meta.acplb/forkOf` does: `fork.rs`), `session/archive` and
//! `session/unarchive` (the registry's mark and the provider's conversation), `session/status`
//! (open here, else kept), and `session/set_title` (`title.rs`).

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, ArchiveSessionResponse, ForkSessionRequest, ForkSessionResponse,
    NewSessionResponse, SessionArchiveCapabilities, SessionCapabilities, SessionConfigOption,
    SessionForkCapabilities, SessionId, SessionModeState, SessionStatus, SessionStatusCapabilities,
    SessionStatusRequest, SessionStatusResponse, SessionTitleCapabilities, SetSessionTitleRequest,
    SetSessionTitleResponse, UnarchiveSessionRequest, UnarchiveSessionResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};

use super::asked::Asked;
use super::durable::{self, READ_LIMIT};
use super::open::Reply;
use super::store::{SessionHandle, Store, send};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::session::SessionMsg;
use crate::sessions::shelf::{self, ShelfError};
use crate::sessions::{hold::HoldError, state};

/// The `_meta` key of an archive's answer saying why the provider's conversation was left as it
/// was (the session is archived in acplb's records all the same).
pub const THREAD_UNCHANGED: &str = "acplb/threadUnchanged";

/// A request for one of the methods of this file, forwarded from the ACP handlers.
#[derive(Debug)]
pub(crate) enum ShelfCommand {
    Fork {
        req: Box<ForkSessionRequest>,
        responder: Responder<ForkSessionResponse>,
        cx: ConnectionTo<Client>,
    },
    Title {
        req: SetSessionTitleRequest,
        responder: Responder<SetSessionTitleResponse>,
    },
    Archive {
        req: ArchiveSessionRequest,
        responder: Responder<ArchiveSessionResponse>,
    },
    Unarchive {
        req: UnarchiveSessionRequest,
        responder: Responder<UnarchiveSessionResponse>,
    },
    Status {
        req: SessionStatusRequest,
        responder: Responder<SessionStatusResponse>,
    },
}

/// How a new session is answered: `session/new`, or `session/fork`.
#[derive(Debug)]
pub(super) enum NewReply {
    New(Responder<NewSessionResponse>),
    Fork(Responder<ForkSessionResponse>),
}

impl NewReply {
    pub(super) fn error(self, error: agent_client_protocol::Error) {
        match self {
            NewReply::New(r) => reply(r.respond_with_error(error)),
            NewReply::Fork(r) => reply(r.respond_with_error(error)),
        }
    }

    pub(super) fn ok(self, id: SessionId, modes: SessionModeState, options: Vec<SessionConfigOption>) {
        match self {
            NewReply::New(r) => {
                reply(r.respond(NewSessionResponse::new(id).modes(modes).config_options(options)));
            }
            NewReply::Fork(r) => {
                reply(r.respond(ForkSessionResponse::new(id).modes(modes).config_options(options)));
            }
        }
    }
}

/// The unstable session capabilities of an acplb that keeps sessions (ACP's `fork`, `title`,
/// `archive`, `status`; ADR 0036).
pub(super) fn capabilities(sessions: SessionCapabilities) -> SessionCapabilities {
    sessions
        .fork(SessionForkCapabilities::new())
        .title(SessionTitleCapabilities::new())
        .archive(SessionArchiveCapabilities::new())
        .status(SessionStatusCapabilities::new())
}

/// A session that does not exist: `-32002`, the id in `data` (what ACP asks of these methods).
pub(super) fn not_found(id: &str, message: &str) -> agent_client_protocol::Error {
    wire::not_found(Reason::UnknownSession, id, message)
}

impl Store {
    pub(super) fn on_shelf(&mut self, cmd: ShelfCommand) {
        match cmd {
            ShelfCommand::Fork { req, responder, cx } => self.fork_session(*req, responder, cx),
            ShelfCommand::Title { req, responder } => self.set_title(req, responder),
            ShelfCommand::Archive { req, responder } => {
                self.archive(req.session_id, true, Archived::Archive(responder));
            }
            ShelfCommand::Unarchive { req, responder } => {
                self.archive(req.session_id, false, Archived::Unarchive(responder));
            }
            ShelfCommand::Status { req, responder } => self.status(req.session_id, responder),
        }
    }

    /// `session/fork`: `session/new` of a session forking `req.session_id` (`fork.rs`), with
    /// the request's cwd, MCP servers, system prompt, directories and `_meta`.
    fn fork_session(
        &mut self,
        req: ForkSessionRequest,
        responder: Responder<ForkSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let source = req.session_id.to_string();
        if let Err(e) = state::check_session_id(&source) {
            return reply(
                responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, e.to_string())),
            );
        }
        let id = SessionId::new(uuid::Uuid::new_v4().to_string());
        let asked = Asked {
            system_prompt: req.system_prompt,
            additional_directories: req.additional_directories,
        };
        let mut meta = req.meta.unwrap_or_default();
        // The source is the request's; a `_meta` naming another would be a second answer.
        meta.remove(super::fork::FORK_OF);
        let reply = Reply::New {
            responder: NewReply::Fork(responder),
            fork_of: Some(source),
            meta,
        };
        self.open(id, req.cwd, req.mcp_servers, asked, reply, cx);
    }

    /// `session/status`: `open` when it is open (or opening) here, `saved` when acplb keeps it,
    /// else `-32002`. Nothing is opened or changed.
    fn status(&self, id: SessionId, responder: Responder<SessionStatusResponse>) {
        if self.sessions.contains_key(&id) || self.opening.contains_key(&id) {
            return reply(responder.respond(SessionStatusResponse::new(SessionStatus::Open)));
        }
        let Some(durability) = self.options.durability.clone() else {
            return reply(
                responder.respond_with_error(not_found(&id.to_string(), &format!("unknown session `{id}`"))),
            );
        };
        tokio::task::spawn_local(async move {
            let (dir, owned) = (durability.state_dir.clone(), id.to_string());
            let kept = durable::off_loop("reading the session's folder", READ_LIMIT, move || {
                if state::check_session_id(&owned).is_err() {
                    return Ok(false);
                }
                Ok(state::journal_path(&dir, &owned).is_file())
            })
            .await;
            match kept {
                Ok(true) => reply(responder.respond(SessionStatusResponse::new(SessionStatus::Saved))),
                Ok(false) => {
                    let looked = state::sessions_dir(&durability.state_dir);
                    let message = format!(
                        "unknown session `{id}`: acplb keeps no session of that id (looked in {})",
                        looked.display()
                    );
                    reply(responder.respond_with_error(not_found(&id.to_string(), &message)));
                }
                Err(e) => reply(responder.respond_with_error(e)),
            }
        });
    }

    /// `session/archive` (`archived`) or `session/unarchive`. A session open here is closed
    /// first, as ACP asks (its turn cancelled, what it told the registry written); one another
    /// acplb has open is refused. Then the registry's mark, then the provider's conversation
    /// (its failure is told in `_meta`, the mark stays).
    fn archive(&mut self, id: SessionId, archived: bool, responder: Archived) {
        let Some(durability) = self.options.durability.clone() else {
            return responder.error(wire::invalid_params(
                Reason::NotKept,
                "this acplb keeps no sessions (it has no state directory), so it has none to archive",
            ));
        };
        if self.opening.contains_key(&id) {
            return responder.error(wire::invalid_params(
                Reason::SessionOpening,
                format!("session `{id}` is still opening; try again once it has opened"),
            ));
        }
        if !archived && self.sessions.contains_key(&id) {
            // Open here, so not archived (a load refuses an archived session): nothing to do.
            return responder.ok(serde_json::Map::new());
        }
        let open = if archived { self.close_for(&id) } else { None };
        let provider = self.provider.clone();
        tokio::task::spawn_local(async move {
            if let Some(open) = open {
                open.closed(&durability).await;
                tracing::info!(session = %id, "session closed to be archived");
            }
            let (state, owned) = (durability.state_dir.clone(), id.to_string());
            let marked = durable::off_loop("archiving the session", READ_LIMIT, move || {
                shelf::set_archived(&state, &owned, archived).map_err(|e| refusal(&e))
            })
            .await;
            let thread = match marked {
                Ok(thread) => thread,
                Err(e) => return responder.error(e),
            };
            let what = if archived { "archived" } else { "unarchived" };
            tracing::info!(session = %id, "session {what}");
            let mut meta = serde_json::Map::new();
            if let Some(thread) = thread
                && let Err(e) = provider.archive_thread(&thread, archived).await
            {
                tracing::warn!(session = %id, %thread, error = %e, "the provider's conversation was not {what}");
                meta.insert(THREAD_UNCHANGED.into(), e.to_string().into());
            }
            responder.ok(meta);
        });
    }
}

/// A session open here that was told to close, before something that needs it closed
/// (`session/archive`, `session/delete`).
pub(super) struct Closing {
    id: SessionId,
    handle: SessionHandle,
}

impl Closing {
    /// Waits for its actor to end, then for what it told the registry to be written (so a
    /// change made after lands over its `closed`, never under it).
    pub(super) async fn closed(self, durability: &super::Durability) {
        if let Err(e) = self.handle.task.await {
            tracing::error!(session = %self.id, error = %e, "session actor ended abnormally");
        }
        if let Some(writer) = durability.registry.as_ref() {
            writer.flush().await;
        }
    }
}

impl Store {
    /// Session `id`, when it is open here, told to close (its turn cancelled, its provider side
    /// stopped) and taken out of the open sessions.
    pub(super) fn close_for(&mut self, id: &SessionId) -> Option<Closing> {
        let handle = self.sessions.remove(id)?;
        send(&handle.tx, SessionMsg::Close);
        Some(Closing {
            id: id.clone(),
            handle,
        })
    }
}

/// The answer of `session/archive` or `session/unarchive`.
enum Archived {
    Archive(Responder<ArchiveSessionResponse>),
    Unarchive(Responder<UnarchiveSessionResponse>),
}

impl Archived {
    fn error(self, error: agent_client_protocol::Error) {
        match self {
            Archived::Archive(r) => reply(r.respond_with_error(error)),
            Archived::Unarchive(r) => reply(r.respond_with_error(error)),
        }
    }

    fn ok(self, meta: serde_json::Map<String, serde_json::Value>) {
        let meta = (!meta.is_empty()).then_some(meta);
        match self {
            Archived::Archive(r) => reply(r.respond(ArchiveSessionResponse::new().meta(meta))),
            Archived::Unarchive(r) => reply(r.respond(UnarchiveSessionResponse::new().meta(meta))),
        }
    }
}

/// The JSON-RPC error for a title or archive mark that was not changed.
pub(super) fn refusal(e: &ShelfError) -> agent_client_protocol::Error {
    match e {
        ShelfError::BadId(_) => wire::invalid_params(Reason::InvalidParams, e.to_string()),
        ShelfError::Unknown { id, .. } => not_found(id, &e.to_string()),
        ShelfError::Held(HoldError::Elsewhere { .. }) => {
            wire::invalid_params(Reason::SessionHeld, e.to_string())
        }
        ShelfError::Held(_) => wire::invalid_params(Reason::SessionOpening, e.to_string()),
        ShelfError::Unlisted { .. } => wire::invalid_params(Reason::NotKept, e.to_string()),
        ShelfError::Journal { .. } | ShelfError::Registry(_) => {
            wire::internal(Reason::Storage, &e.to_string())
        }
    }
}
