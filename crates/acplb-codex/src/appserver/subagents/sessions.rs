//! A subagent as an ACP session of its own, for a client that takes them (ACP's unstable
//! subagents, ADR 0055): announced on the parent's session with `subagent_update` (title,
//! task), its state following its turns (the editor may cancel a turn of its while it runs,
//! ADR 0056), and everything its own decoder makes sent to its session (marked for it:
//! `acplb_core::provider::route`).

use acplb_core::provider::route;
use agent_client_protocol::v1::schema::{
    ErrorStopReason, IdleStateUpdate, IdleStopReason, RequiresActionStateUpdate, RunningStateUpdate,
    SessionCancelCapabilities, SessionUpdate, StateUpdate, SubagentSessionCapabilities, SubagentUpdate,
    UnknownStateUpdate,
};

/// The longest task a child's announcement describes, in characters.
const DESCRIPTION_CHARS: usize = 2000;

/// Why a child's foreground work stopped, as its session's state says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stop {
    /// Its turn ended as the agent meant.
    EndTurn,
    /// Interrupted: a cancel, or Codex stopped it.
    Cancelled,
    /// Its turn failed, with Codex's words.
    Error(String),
    /// Nobody carries its news any more (the parent's turn ended while it worked, or Codex
    /// went): what it does is not known.
    Unknown,
}

/// The announcement of the child `id`: its title, its task in full (shortened), and nothing
/// the editor may do to it yet (its state says when it may cancel a turn of its).
pub(super) fn announced(id: &str, title: Option<&str>, task: Option<&str>) -> SessionUpdate {
    let mut update = SubagentUpdate::new(id.to_owned())
        .title(title.unwrap_or("Subagent").to_owned())
        .capabilities(SubagentSessionCapabilities::new());
    if let Some(task) = task {
        update = update.description(super::lines::shorten(task, DESCRIPTION_CHARS));
    }
    SessionUpdate::SubagentUpdate(update)
}

/// The child `id` got a title (its task, learned after it was announced).
pub(super) fn retitled(id: &str, title: &str) -> SessionUpdate {
    SessionUpdate::SubagentUpdate(SubagentUpdate::new(id.to_owned()).title(title.to_owned()))
}

/// The child `id`'s state: running while `stop` is `None`, else idle for why it stopped (or
/// unknown); with whether the editor may cancel its work now (`cancel`: a turn of its runs,
/// ADR 0056), which every state says again.
pub(super) fn state(id: &str, stop: Option<&Stop>, cancel: bool) -> SessionUpdate {
    let state = match stop {
        None => StateUpdate::Running(RunningStateUpdate::new()),
        Some(Stop::EndTurn) => StateUpdate::Idle(IdleStateUpdate::new().stop_reason(IdleStopReason::EndTurn)),
        Some(Stop::Cancelled) => {
            StateUpdate::Idle(IdleStateUpdate::new().stop_reason(IdleStopReason::Cancelled))
        }
        Some(Stop::Error(message)) => {
            let error = agent_client_protocol::v1::schema::Error::new(-32603, message.clone());
            StateUpdate::Idle(
                IdleStateUpdate::new().stop_reason(IdleStopReason::from(ErrorStopReason::new().error(error))),
            )
        }
        Some(Stop::Unknown) => StateUpdate::Unknown(UnknownStateUpdate::new()),
    };
    let capabilities = SubagentSessionCapabilities::new().cancel(cancel.then(SessionCancelCapabilities::new));
    SessionUpdate::SubagentUpdate(
        SubagentUpdate::new(id.to_owned())
            .state(state)
            .capabilities(capabilities),
    )
}

/// The child `id` waits for the editor's answer to what it asked.
pub(super) fn requires_action(id: &str) -> SessionUpdate {
    let state = StateUpdate::RequiresAction(RequiresActionStateUpdate::new());
    SessionUpdate::SubagentUpdate(SubagentUpdate::new(id.to_owned()).state(state))
}

/// `updates` the child `id`'s decoder made, marked for its session and appended to `out`;
/// kinds a child's session does not carry (a title of the thread's) are dropped.
pub(super) fn routed(id: &str, updates: Vec<SessionUpdate>, out: &mut Vec<SessionUpdate>) {
    for mut update in updates {
        if route::to(&mut update, id) {
            out.push(update);
        } else {
            tracing::debug!("an update of a subagent's session of a kind it does not carry; dropped");
        }
    }
}
