//! One v1 `session/update` as the v2 updates that say the same (ADR 0048): tool calls become
//! keyed upserts, Zed's terminal metadata becomes v2's own terminals, the structured plan gets
//! an id, commands and config options take v2's tagged shapes, and every message chunk carries
//! a message id. Pure: the caller keeps an [`Ids`] per session.

use serde_json::{Map, Value, json};

use super::content;

/// The id of the one structured plan a session has (v1 plans carry no id).
pub(super) const PLAN_ID: &str = "plan";

/// The message ids a session's chunks were last given, for chunks that came without one:
/// consecutive chunks of one kind form one message, anything else in between starts the next.
#[derive(Debug, Default)]
pub(super) struct Ids {
    /// The kind of the last update (`agent_message_chunk`, ...) and the id its message got.
    last: Option<(String, String)>,
}

impl Ids {
    /// The message id for a chunk of `kind` that came without one.
    fn for_chunk(&mut self, kind: &str) -> String {
        match &self.last {
            Some((last, id)) if last == kind => id.clone(),
            _ => {
                let id = uuid::Uuid::new_v4().to_string();
                self.last = Some((kind.to_owned(), id.clone()));
                id
            }
        }
    }

    /// Something other than a chunk without an id came: the next such chunk starts a message.
    fn interrupt(&mut self) {
        self.last = None;
    }
}

/// The v2 updates for the v1 `update` (a `SessionUpdate` object), in the order they are sent.
/// Empty for what v2 has no place for (`current_mode_update`: v2 has no modes, and the mode
/// is also a config option).
pub(super) fn to_v2(update: Value, ids: &mut Ids) -> Vec<Value> {
    let Value::Object(mut update) = update else {
        return Vec::new();
    };
    let kind = update
        .get("sessionUpdate")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match kind.as_str() {
        "user_message_chunk" | "agent_message_chunk" | "agent_thought_chunk" => {
            let has_id = update
                .get("messageId")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.is_empty());
            if has_id {
                ids.interrupt();
            } else {
                update.insert("messageId".into(), json!(ids.for_chunk(&kind)));
            }
            vec![Value::Object(update)]
        }
        "tool_call" | "tool_call_update" => {
            ids.interrupt();
            tool_call(update)
        }
        "plan" => {
            ids.interrupt();
            let entries = update.remove("entries").unwrap_or_else(|| json!([]));
            let mut out = Map::new();
            out.insert("sessionUpdate".into(), json!("plan_update"));
            out.insert(
                "plan".into(),
                json!({"type": "items", "planId": PLAN_ID, "entries": entries}),
            );
            keep_meta(&mut out, &mut update);
            vec![Value::Object(out)]
        }
        "available_commands_update" => {
            if let Some(Value::Array(commands)) = update.get_mut("availableCommands") {
                commands.iter_mut().for_each(command);
            }
            vec![Value::Object(update)]
        }
        "config_option_update" => {
            if let Some(options) = update.get_mut("configOptions") {
                config_options(options);
            }
            vec![Value::Object(update)]
        }
        "current_mode_update" => Vec::new(),
        // AIR's own updates (no v2 design exists for them): the same payload under a
        // `_`-prefixed kind, as the TS peer sends them on v2.
        "async_task_spawned" | "async_task_state_update" => {
            ids.interrupt();
            update.insert("sessionUpdate".into(), json!(format!("_{kind}")));
            vec![Value::Object(update)]
        }
        _ => {
            ids.interrupt();
            vec![Value::Object(update)]
        }
    }
}

/// A v1 tool call or tool call update: the terminal it drives (v2 `terminal_update` before the
/// call names it, its output and exit after), then the call as a v2 `tool_call_update`.
fn tool_call(mut update: Map<String, Value>) -> Vec<Value> {
    update.insert("sessionUpdate".into(), json!("tool_call_update"));
    if let Some(Value::Array(items)) = update.get_mut("content") {
        items.iter_mut().for_each(content::to_v2);
    }
    let terminal = content::Terminal::take(&mut update);
    let mut out = Vec::new();
    if let Some(created) = terminal.created(update.get("rawInput")) {
        out.push(created);
    }
    out.push(Value::Object(update));
    out.extend(terminal.output_and_exit());
    out
}

/// A v1 available command as v2's tagged `command`, with its input tagged `text`.
fn command(command: &mut Value) {
    let Value::Object(command) = command else {
        return;
    };
    command.insert("type".into(), json!("command"));
    if let Some(Value::Object(input)) = command.get_mut("input") {
        input.insert("type".into(), json!("text"));
    }
}

/// A list of v1 config options in v2's shape (see [`config_option`]).
pub(super) fn config_options(options: &mut Value) {
    if let Value::Array(list) = options {
        list.iter_mut().for_each(config_option);
    }
}

/// A v1 config option (`id`, select groups named `group`) as v2's (`configId`, `groupId`).
fn config_option(option: &mut Value) {
    let Value::Object(option) = option else {
        return;
    };
    if let Some(id) = option.remove("id") {
        option.insert("configId".into(), id);
    }
    if let Some(Value::Array(options)) = option.get_mut("options") {
        for group in options.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(id) = group.remove("group") {
                group.insert("groupId".into(), id);
            }
        }
    }
}

/// Moves a non-null `_meta` from `from` to `out`.
pub(super) fn keep_meta(out: &mut Map<String, Value>, from: &mut Map<String, Value>) {
    if let Some(meta) = from.remove("_meta").filter(|m| !m.is_null()) {
        out.insert("_meta".into(), meta);
    }
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
