//! Updates of a session's subagent sessions (ADR 0055). A provider that shows a child agent as
//! an ACP session of its own puts the child's updates in the parent's stream, each marked with
//! the child's session id under [`ROUTE`] in its `_meta`. They keep their place in the parent's
//! order through every channel that carries typed updates (plugins and the journal see them as
//! the parent's), and the runtime sends each as a `session/update` of the child's id: live in
//! the sink, again in a replay of the parent's journal.

use agent_client_protocol::v1::schema::{Meta, SessionUpdate};
use serde_json::Value;

/// The `_meta` key under which an update carries the id of the session it is for.
pub const ROUTE: &str = "acplb/session";

/// What joins a parent session's id and a child's thread in the child session's id
/// (`<parent>:subagent:<thread>`, the TS codex-acp's shape).
pub const CHILD: &str = ":subagent:";

/// What joins a child's thread and the number of its life in its session's id, from its second
/// life on (`<thread>:generation:<n>`, the TS codex-acp's shape for AIR).
pub const GENERATION: &str = ":generation:";

/// The id of the session of the child agent on `thread` of session `parent`.
#[must_use]
pub fn child_id(parent: &str, thread: &str) -> String {
    format!("{parent}{CHILD}{thread}")
}

/// The parent session of the child session `id` (`<parent>:subagent:<thread>`), if it is one.
#[must_use]
pub fn parent_of(id: &str) -> Option<&str> {
    let (parent, thread) = id.split_once(CHILD)?;
    (!parent.is_empty() && !thread.is_empty()).then_some(parent)
}

/// The `_meta` of `update`, for the kinds a child session's agent sends (messages, thoughts,
/// tool calls, plan entries and proposed plans, usage, notices); `None` for the others.
fn meta_mut(update: &mut SessionUpdate) -> Option<&mut Option<Meta>> {
    match update {
        SessionUpdate::UserMessageChunk(c)
        | SessionUpdate::AgentMessageChunk(c)
        | SessionUpdate::AgentThoughtChunk(c) => Some(&mut c.meta),
        SessionUpdate::ToolCall(c) => Some(&mut c.meta),
        SessionUpdate::ToolCallUpdate(c) => Some(&mut c.meta),
        SessionUpdate::Plan(p) => Some(&mut p.meta),
        SessionUpdate::PlanUpdate(p) => Some(&mut p.meta),
        SessionUpdate::UsageUpdate(u) => Some(&mut u.meta),
        SessionUpdate::Notice(n) => Some(&mut n.meta),
        _ => None,
    }
}

/// Marks `update` as one of session `session`; `false` (and unmarked) for a kind a child's
/// session does not carry, which the caller drops rather than show as the parent's.
#[must_use]
pub fn to(update: &mut SessionUpdate, session: &str) -> bool {
    let Some(meta) = meta_mut(update) else {
        return false;
    };
    meta.get_or_insert_with(Default::default)
        .insert(ROUTE.to_owned(), Value::String(session.to_owned()));
    true
}

/// The session `update` is marked for, if any.
#[must_use]
pub fn of(update: &SessionUpdate) -> Option<&str> {
    let meta = match update {
        SessionUpdate::UserMessageChunk(c)
        | SessionUpdate::AgentMessageChunk(c)
        | SessionUpdate::AgentThoughtChunk(c) => c.meta.as_ref(),
        SessionUpdate::ToolCall(c) => c.meta.as_ref(),
        SessionUpdate::ToolCallUpdate(c) => c.meta.as_ref(),
        SessionUpdate::Plan(p) => p.meta.as_ref(),
        SessionUpdate::PlanUpdate(p) => p.meta.as_ref(),
        SessionUpdate::UsageUpdate(u) => u.meta.as_ref(),
        SessionUpdate::Notice(n) => n.meta.as_ref(),
        _ => None,
    };
    meta?.get(ROUTE)?.as_str()
}

/// Takes the mark off `update` (an empty `_meta` left is removed): the session it is for, if
/// any. A mark that is not a string is dropped and the update stays the parent's.
pub fn take(update: &mut SessionUpdate) -> Option<String> {
    let meta = meta_mut(update)?;
    let map = meta.as_mut()?;
    let route = map.remove(ROUTE);
    if map.is_empty() {
        *meta = None;
    }
    match route? {
        Value::String(session) => Some(session),
        _ => None,
    }
}

/// Whether `update` belongs to a subagent session: it is marked for another session, or it
/// announces one (`subagent_update`). A client that does not take subagent sessions gets
/// neither.
#[must_use]
pub fn is_subagents(update: &SessionUpdate) -> bool {
    matches!(update, SessionUpdate::SubagentUpdate(_)) || of(update).is_some()
}

#[cfg(test)]
#[path = "route_tests.rs"]
mod tests;
