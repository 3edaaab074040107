//! What a session actor is made of (`SessionParts`, from the runtime when a session opens) and
//! the actor built from them.

use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::SessionId;

use super::{Inbox, SessionActor, file_report, unrecorded};
use crate::permission::Mode;
use crate::plugin::Pipeline;
use crate::provider::{ProviderSession, SessionSettings};
use crate::session::options::OptionCatalog;
use crate::sessions::journal::Journal;
use crate::sessions::registry::Tracked;
use crate::transport::OutputFlow;

/// What of the actor's own answers the client declared it takes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Takes {
    /// Form elicitation (questions go to it as forms).
    pub(super) forms: bool,
    /// AIR's typed session failures (`failure.rs`).
    pub(super) typed_failures: bool,
    /// Subagent sessions in AIR's shapes (ADR 0055).
    pub(super) air_subagents: bool,
}

/// What a session is made of, besides its id and connection.
pub(crate) struct SessionParts {
    pub(crate) cwd: std::path::PathBuf,
    pub(crate) provider: Box<dyn ProviderSession>,
    pub(crate) catalog: Rc<OptionCatalog>,
    pub(crate) pipeline: Rc<Pipeline>,
    pub(crate) settings: SessionSettings,
    pub(crate) mode: Mode,
    /// Turns the session already had (a loaded session goes on counting).
    pub(crate) turns: u64,
    pub(crate) journal: Option<Rc<Journal>>,
    pub(crate) registry: Option<Tracked>,
    pub(crate) state_dir: Option<std::path::PathBuf>,
    pub(crate) turn_timeout: Option<Duration>,
    pub(crate) inbox: Option<Inbox>,
    /// Whether the client declared form elicitation (questions go to it as forms).
    pub(crate) forms: bool,
    /// The folders the session may change (its cwd and additional directories), when the
    /// client declared AIR's `agentFileChangeReport`.
    pub(crate) report_roots: Option<Vec<std::path::PathBuf>>,
    /// Whether the client declared AIR's `sessionFailure`: a failed turn is then answered with
    /// its failure in `_meta` (ADR 0054).
    pub(crate) typed_failures: bool,
    /// Whether the client takes subagent sessions in AIR's shapes (ADR 0055).
    pub(crate) air_subagents: bool,
}

impl SessionActor {
    pub(crate) fn new(id: SessionId, cx: ConnectionTo<Client>, parts: SessionParts) -> Self {
        if let Some(journal) = &parts.journal {
            let shows_notices = parts.inbox.as_ref().is_some_and(|i| i.shows_notices);
            journal.listen(unrecorded::listener(cx.clone(), id.clone(), shows_notices));
        }
        Self {
            id,
            cwd: parts.cwd,
            cx,
            provider: Some(parts.provider),
            mode: parts.mode,
            settings: parts.settings,
            catalog: parts.catalog,
            pipeline: parts.pipeline,
            flow: OutputFlow::default(),
            queue: VecDeque::new(),
            running: None,
            shutting_down: false,
            hushed: false,
            turn_timeout: parts.turn_timeout,
            journal: parts.journal,
            registry: parts.registry,
            turns: parts.turns,
            state_dir: parts.state_dir,
            summary_by: None,
            inbox: parts.inbox,
            hold: Rc::default(),
            takes: Takes {
                forms: parts.forms,
                typed_failures: parts.typed_failures,
                air_subagents: parts.air_subagents,
            },
            titled: None,
            thread: None,
            file_report: parts.report_roots.map(file_report::Reports::new),
        }
    }
}
