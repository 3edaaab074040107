//! What the runtime, and the session's own helpers (its queue watcher, blocking claims), tell
//! a session actor.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    PromptRequest, PromptResponse, SessionConfigOption, SessionConfigOptionValue, SessionModeId,
    SessionModeState, SetSessionConfigOptionResponse, SetSessionModeResponse,
};

use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::sessions::queue::{Claimed, Queue, QueueError};

/// What the runtime tells a session.
#[derive(Debug)]
pub(crate) enum SessionMsg {
    Prompt {
        req: PromptRequest,
        responder: Responder<PromptResponse>,
    },
    /// A prompt that goes into the running turn whatever `while_busy` says, where the provider
    /// steers (`_session/goal pause` and `clear`: they act on a goal's running turn); queued
    /// like any prompt when no turn runs.
    Control {
        req: PromptRequest,
        responder: Responder<PromptResponse>,
    },
    Cancel,
    /// `session/cancel` of one of this session's subagent sessions (its id): the running
    /// turn's provider stops that child's work (ADR 0056); with no turn running, nothing does.
    CancelChild(String),
    SetMode {
        mode_id: SessionModeId,
        responder: Responder<SetSessionModeResponse>,
    },
    SetConfig {
        id: String,
        value: SessionConfigOptionValue,
        responder: Responder<SetSessionConfigOptionResponse>,
    },
    /// acplb stops: the running turn is cancelled, then the summary asked for (if the
    /// `session-summary` plugin runs) by the deadline.
    Shutdown,
    /// `session/close`: the running turn is cancelled and the session stops.
    Close,
    /// `session/load` or `session/resume` of this open session: it says what it is set to,
    /// and with `hold`, holds its updates back until the load's replay is done.
    Reattach {
        hold: bool,
        answer: tokio::sync::oneshot::Sender<Attached>,
    },
    /// `session/set_title` or `/rename` (`said`: also told in the conversation): the title is
    /// shown, recorded and kept from being replaced by the first prompt; `answer` gets the
    /// provider's thread, for it to be renamed too.
    SetTitle {
        title: String,
        said: bool,
        answer: tokio::sync::oneshot::Sender<Option<String>>,
    },
    /// `_session/steering` (ADR 0046): `req` joins the running turn and is answered at once;
    /// with no turn to join it is a turn of its own, or refused when `prompt_required`.
    Steer {
        req: PromptRequest,
        prompt_required: bool,
        responder: Responder<serde_json::Value>,
    },
    /// What a vendor request naming this session tells the provider (ADR 0046).
    Describe {
        answer: tokio::sync::oneshot::Sender<crate::provider::VendorSession>,
    },
    /// The load's replay was sent (or failed): the held updates go out.
    Replayed,
    /// The session's input queue is open (claims left by a dead acplb taken back) and watched.
    QueueOpened(Queue),
    /// The input queue may hold a message (a file arrived, or the watcher's tick).
    QueueWake,
    /// A claim made off the runtime thread came back, with the queue it was made on.
    QueueClaimed {
        queue: Queue,
        result: Result<Option<Claimed>, QueueError>,
    },
}

impl SessionMsg {
    /// Answers the request this message carries (if any) with an error saying `why`.
    pub(crate) fn refuse(self, why: &str) {
        let error = || wire::internal(Reason::SessionStopped, why);
        match self {
            SessionMsg::Prompt { responder, .. } | SessionMsg::Control { responder, .. } => {
                reply(responder.respond_with_error(error()));
            }
            SessionMsg::SetMode { responder, .. } => reply(responder.respond_with_error(error())),
            SessionMsg::SetConfig { responder, .. } => reply(responder.respond_with_error(error())),
            SessionMsg::Steer { responder, .. } => reply(responder.respond_with_error(error())),
            SessionMsg::Cancel
            | SessionMsg::CancelChild(_)
            | SessionMsg::Reattach { .. }
            | SessionMsg::Replayed
            | SessionMsg::SetTitle { .. }
            | SessionMsg::Describe { .. }
            | SessionMsg::Shutdown
            | SessionMsg::Close
            | SessionMsg::QueueOpened(_)
            | SessionMsg::QueueWake
            | SessionMsg::QueueClaimed { .. } => {}
        }
    }
}

/// What an open session tells a load or resume of it.
#[derive(Debug)]
pub(crate) struct Attached {
    pub(crate) modes: SessionModeState,
    pub(crate) options: Vec<SessionConfigOption>,
    /// Its journal and how long it was when updates began to be held (`None`: not kept).
    pub(crate) journal: Option<(std::path::PathBuf, u64)>,
}
