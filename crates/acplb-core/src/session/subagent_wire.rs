//! How an update of a session reaches the client, when subagent sessions are in play (ADR
//! 0055): one marked for a child's session goes to that session; an announcement or state of a
//! child (`subagent_update`) goes as it is, or, to a client that takes subagent sessions in
//! `JetBrains` AIR's shapes, as AIR's `subagent_spawned` / `subagent_state_update` with the
//! child known by its Codex thread's id, as the TS peer sends them. The journal keeps the
//! standard form; the shape is chosen at the edge, live and in a replay alike.

use agent_client_protocol::UntypedMessage;
use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema::{
    IdleStopReason, SessionId, SessionNotification, SessionUpdate, StateUpdate, SubagentUpdate,
};
use serde_json::{Value, json};

use crate::provider::{air_ids, route};

/// What goes on the wire for one update.
#[derive(Debug)]
pub(crate) enum Wire {
    /// A typed `session/update`.
    Typed(Box<SessionNotification>),
    /// A `session/update` of a kind ACP has no type for (AIR's).
    Untyped(UntypedMessage),
    /// Nothing: the client's shape has no such update (AIR's children have no running state).
    Nothing,
}

/// The wire form of `update` of session `session`, for a client that takes subagent sessions
/// in AIR's shapes (`air`) or not.
pub(crate) fn wire(session: &SessionId, mut update: SessionUpdate, air: bool) -> Wire {
    if let Some(to) = route::take(&mut update) {
        let to = addressee(&to, air).to_owned();
        return Wire::Typed(Box::new(SessionNotification::new(SessionId::new(to), update)));
    }
    match update {
        SessionUpdate::SubagentUpdate(child) if air => {
            let Some(update) = air_update(&child) else {
                return Wire::Nothing;
            };
            if update["sessionUpdate"] == "subagent_spawned" {
                // AIR knows the child by this id from now on: a request naming it is told what
                // it names.
                air_ids::shown(thread_of(&child.session_id.0));
            }
            let params = json!({ "sessionId": session, "update": update });
            match UntypedMessage::new("session/update", params) {
                Ok(message) => Wire::Untyped(message),
                Err(e) => {
                    tracing::debug!(error = %e, "an AIR subagent update could not be built");
                    Wire::Nothing
                }
            }
        }
        update => Wire::Typed(Box::new(SessionNotification::new(session.clone(), update))),
    }
}

/// The id the client knows the child session `child` by: AIR by its thread's.
pub(crate) fn addressee(child: &str, air: bool) -> &str {
    if air { thread_of(child) } else { child }
}

/// The thread of a child's session id (`<parent>:subagent:<thread>`): AIR knows a child by it.
fn thread_of(child: &str) -> &str {
    child.split_once(route::CHILD).map_or(child, |(_, thread)| thread)
}

/// AIR's form of a child's announcement or end; `None` for what AIR does not show (a running
/// state, a new title).
fn air_update(child: &SubagentUpdate) -> Option<Value> {
    let id = thread_of(&child.session_id.0);
    if let MaybeUndefined::Value(name) = &child.title
        && !matches!(child.capabilities, MaybeUndefined::Undefined)
    {
        let task = match &child.description {
            MaybeUndefined::Value(task) => task.clone(),
            _ => format!("Delegated task for {name}"),
        };
        return Some(json!({
            "sessionUpdate": "subagent_spawned",
            "subagentSessionId": id,
            "name": name,
            "task": task,
            "capabilities": {},
        }));
    }
    let MaybeUndefined::Value(state) = &child.state else {
        return None;
    };
    let state = match state {
        StateUpdate::Idle(idle) => match &idle.stop_reason {
            Some(IdleStopReason::Cancelled) => "cancelled",
            Some(IdleStopReason::Error(_)) => "failed",
            _ => "completed",
        },
        // Nobody carries its news any more: for AIR, it failed (the peer's word when its
        // app-server dies or a child outlasts its wait).
        StateUpdate::Unknown(_) => "failed",
        _ => return None,
    };
    Some(json!({ "sessionUpdate": "subagent_state_update", "subagentSessionId": id, "state": state }))
}

#[cfg(test)]
#[path = "subagent_wire_tests.rs"]
mod tests;
