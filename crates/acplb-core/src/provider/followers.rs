//! Session updates of kinds ACP's `SessionUpdate` has no variant for: a vendor's own, such as
//! `JetBrains` AIR's `async_task_spawned` (ADR 0051). A provider hangs them on the tool call
//! update they belong after, under [`FOLLOWERS`] in its `_meta`; the runtime's sink takes them
//! off before plugins, the journal or the client see that update, and sends each right after
//! it as a `session/update` of its own. So they keep their place in the session's order through
//! every channel that carries typed updates, and are neither journaled nor replayed.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallUpdate};
use serde_json::{Map, Value};

/// The `_meta` key under which a tool call update carries the updates that follow it.
pub const FOLLOWERS: &str = "acplb/followers";

/// Has `follower` (an update object with its own `sessionUpdate` kind; anything else is
/// dropped) sent right after `update`, after any that update already carries.
pub fn follow(update: &mut ToolCallUpdate, follower: Value) {
    let meta = update.meta.get_or_insert_with(Default::default);
    let list = meta
        .entry(FOLLOWERS.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(list) = list {
        list.push(follower);
    }
}

/// Takes the followers off `update` (an empty `_meta` left is removed): the update objects to
/// send after it, in order. Anything under the key that is not such an object is dropped.
pub fn take(update: &mut SessionUpdate) -> Vec<Map<String, Value>> {
    let SessionUpdate::ToolCallUpdate(update) = update else {
        return Vec::new();
    };
    let Some(meta) = update.meta.as_mut() else {
        return Vec::new();
    };
    let Some(list) = meta.remove(FOLLOWERS) else {
        return Vec::new();
    };
    if meta.is_empty() {
        update.meta = None;
    }
    let Value::Array(list) = list else {
        return Vec::new();
    };
    list.into_iter()
        .filter_map(|f| match f {
            Value::Object(f) if f.get("sessionUpdate").is_some_and(Value::is_string) => Some(f),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "followers_tests.rs"]
mod tests;
