//! Command output recorded as Zed's terminals (ADR 0033), replayed to a client that shows
//! text: the terminal content and `_meta` taken out, each terminal's data gathered and shown,
//! fenced, in the update that ended it, as a text client would have seen it live.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallContent, ToolCallUpdateFields};
use serde_json::{Map, Value};

/// The escape that resets a terminal (RIS).
const RESET: &str = "\u{1b}c";

/// The `_meta` keys of Zed's terminal convention.
const KEYS: [&str; 3] = ["terminal_info", "terminal_output", "terminal_exit"];

/// Terminals met so far in a replay, with the data each received.
#[derive(Debug, Default)]
pub(crate) struct AsText {
    data: HashMap<String, String>,
}

impl AsText {
    /// `update` as a client without terminals sees it; `None` when nothing of it is left.
    pub(crate) fn convert(&mut self, update: SessionUpdate) -> Option<SessionUpdate> {
        match update {
            SessionUpdate::ToolCall(mut call) if has_terminal(call.meta.as_ref()) => {
                strip(&mut call.meta);
                call.content
                    .retain(|c| !matches!(c, ToolCallContent::Terminal(_)));
                Some(SessionUpdate::ToolCall(call))
            }
            SessionUpdate::ToolCallUpdate(mut update) if has_terminal(update.meta.as_ref()) => {
                let meta = update.meta.clone().unwrap_or_default();
                let part = |key: &str| meta.get(key).filter(|v| v.is_object());
                let (output, exit) = (part("terminal_output"), part("terminal_exit"));
                let id = output
                    .or(exit)
                    .and_then(|v| v["terminal_id"].as_str())
                    .unwrap_or_default();
                if let Some(data) = output.and_then(|o| o["data"].as_str()) {
                    let shown = self.data.entry(id.to_owned()).or_default();
                    // A reset (acplb resends what Codex did not stream) clears what came before.
                    match data.rfind(RESET) {
                        Some(at) => data[at + RESET.len()..].clone_into(shown),
                        None => shown.push_str(data),
                    }
                }
                strip(&mut update.meta);
                if let Some(content) = update.fields.content.as_mut() {
                    content.retain(|c| !matches!(c, ToolCallContent::Terminal(_)));
                }
                if exit.is_some() {
                    let data = self.data.remove(id).unwrap_or_default();
                    let mut content: Vec<ToolCallContent> = Vec::new();
                    if !data.is_empty() {
                        content.push(fenced(&data).into());
                    }
                    content.extend(update.fields.content.take().unwrap_or_default());
                    update.fields.content = (!content.is_empty()).then_some(content);
                }
                let empty = update.fields == ToolCallUpdateFields::new() && update.meta.is_none();
                (!empty).then_some(SessionUpdate::ToolCallUpdate(update))
            }
            other => Some(other),
        }
    }
}

fn has_terminal(meta: Option<&Map<String, Value>>) -> bool {
    meta.is_some_and(|m| KEYS.iter().any(|k| m.contains_key(*k)))
}

/// `meta` without the terminal keys (`None` when nothing else is left).
fn strip(meta: &mut Option<Map<String, Value>>) {
    if let Some(m) = meta.as_mut() {
        for key in KEYS {
            m.remove(key);
        }
        if m.is_empty() {
            *meta = None;
        }
    }
}

/// `text` in a fenced Markdown block whose fence no line of `text` can close.
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for b in text.bytes() {
        run = if b == b'`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{newline}{fence}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn update(v: Value) -> SessionUpdate {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_terminal_replays_as_text_shown_when_it_ended() {
        let mut as_text = AsText::default();
        let started = as_text.convert(update(json!({
            "sessionUpdate": "tool_call", "toolCallId": "c", "title": "ls", "status": "in_progress",
            "content": [{"type": "terminal", "terminalId": "c"}],
            "_meta": {"terminal_info": {"terminal_id": "c", "cwd": "/w"}}
        })));
        let started = serde_json::to_value(started.unwrap()).unwrap();
        assert!(
            started.get("_meta").is_none() && started.get("content").is_none(),
            "{started}"
        );
        let piece = |data: &str| {
            update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "c",
                "_meta": {"terminal_output": {"terminal_id": "c", "data": data}}}))
        };
        assert!(
            as_text.convert(piece("a\n")).is_none(),
            "a piece alone shows nothing"
        );
        assert!(as_text.convert(piece("lost")).is_none());
        assert!(as_text.convert(piece("\u{1b}ca\n")).is_none(), "a reset clears");
        assert!(as_text.convert(piece("``` b")).is_none());
        let end = as_text.convert(update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed",
            "content": [{"type": "terminal", "terminalId": "c"}, {"type": "content", "content": {"type": "text", "text": "Cancelled."}}],
            "_meta": {"terminal_exit": {"terminal_id": "c", "exit_code": null, "signal": null}, "other": 1}
        })));
        let end = serde_json::to_value(end.unwrap()).unwrap();
        assert_eq!(end["content"][0]["content"]["text"], "````\na\n``` b\n````");
        assert_eq!(end["content"][1]["content"]["text"], "Cancelled.");
        assert_eq!(end["_meta"], json!({"other": 1}));
        let plain =
            update(json!({"sessionUpdate": "tool_call_update", "toolCallId": "d", "status": "completed"}));
        assert_eq!(as_text.convert(plain.clone()), Some(plain));
    }
}
