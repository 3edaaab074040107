//! How a session opens: new (`session/new`), loaded with its history replayed
//! (`session/load`) or resumed without it (`session/resume`). The provider side and any file
//! work happen off the loop; the session starts, and the request is answered, once they are done.

use std::rc::Rc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    LoadSessionResponse, NewSessionResponse, ResumeSessionResponse, SessionConfigOption, SessionId,
    SessionModeState,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};

use super::durable::Loaded;
use super::wire_error::reply;
use crate::plugin::{Pipeline, SessionNotice};
use crate::provider::ProviderSession;
use crate::sessions::journal::Journal;

/// The request a session is opened for, and how it is answered.
#[derive(Debug)]
pub(super) enum Reply {
    New(Responder<NewSessionResponse>),
    Load(Responder<LoadSessionResponse>),
    Resume(Responder<ResumeSessionResponse>),
}

impl Reply {
    pub(super) fn error(self, error: agent_client_protocol::Error) {
        match self {
            Reply::New(r) => reply(r.respond_with_error(error)),
            Reply::Load(r) => reply(r.respond_with_error(error)),
            Reply::Resume(r) => reply(r.respond_with_error(error)),
        }
    }

    pub(super) fn ok(self, id: SessionId, modes: SessionModeState, options: Vec<SessionConfigOption>) {
        match self {
            Reply::New(r) => {
                reply(r.respond(NewSessionResponse::new(id).modes(modes).config_options(options)));
            }
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

/// What the loop decided before the provider side opened.
#[derive(Debug)]
pub(super) struct PendingSession {
    pub(super) cwd: std::path::PathBuf,
    pub(super) pipeline: Rc<Pipeline>,
    pub(super) notices: Vec<SessionNotice>,
    pub(super) reply: Reply,
    pub(super) cx: ConnectionTo<Client>,
    /// Who the session is in an agent team, if a plugin claimed an identity.
    pub(super) identity: Option<crate::plugin::TeamIdentity>,
}

/// What opening produced.
pub(super) struct OpenedParts {
    pub(super) provider: Box<dyn ProviderSession>,
    pub(super) journal: Option<Journal>,
    /// The earlier session, for a load or resume.
    pub(super) loaded: Option<Loaded>,
}

/// A session whose opening finished (or failed).
pub(super) struct Opened {
    pub(super) session_id: SessionId,
    pub(super) result: Result<OpenedParts, agent_client_protocol::Error>,
    pub(super) pending: PendingSession,
}
