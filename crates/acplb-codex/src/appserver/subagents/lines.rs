//! One line of what a subagent did, from one of its finished items: its messages, the
//! commands it ran, the files it edited, the tools it called. Lines are short and on one line;
//! what is not worth a line (its reasoning, its task) gives none.

use serde_json::Value;

/// The longest line kept, in characters.
const LINE_CHARS: usize = 240;

/// The line a subagent's finished `item` shows, if any.
pub(super) fn line(item: &Value) -> Option<String> {
    let text = |key: &str| item.get(key).and_then(Value::as_str);
    let failed = matches!(text("status"), Some("failed" | "declined"));
    let line = match text("type")? {
        "agentMessage" => text("text")?.trim().to_owned(),
        "commandExecution" => {
            let command = crate::command::unwrap_shell(text("command")?);
            match item.get("exitCode").and_then(Value::as_i64) {
                Some(code) if code != 0 => format!("ran `{command}` (exit code {code})"),
                _ if failed => format!("ran `{command}` (failed)"),
                _ => format!("ran `{command}`"),
            }
        }
        "fileChange" => {
            let paths: Vec<&str> = item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("path").and_then(Value::as_str))
                .collect();
            let verb = if failed { "could not edit" } else { "edited" };
            format!("{verb} {}", paths.join(", "))
        }
        "mcpToolCall" => {
            let verb = if failed { "called (failed)" } else { "called" };
            format!("{verb} {}/{}", text("server")?, text("tool")?)
        }
        "webSearch" => format!("searched the web for {}", text("query")?),
        "subAgentActivity" if text("kind") == Some("started") => {
            format!("spawned {}", text("agentPath").unwrap_or("a subagent"))
        }
        _ => return None,
    };
    (!line.is_empty()).then(|| shorten(&line, LINE_CHARS))
}

/// `text` on one line, cut to `chars` characters with an ellipsis.
pub(super) fn shorten(text: &str, chars: usize) -> String {
    crate::render::one_line(text, chars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_give_their_lines() {
        let cases = [
            (
                json!({"type": "agentMessage", "text": "Done.\nAll good."}),
                Some("Done. All good."),
            ),
            (
                json!({"type": "commandExecution", "command": "ls", "exitCode": 0, "status": "completed"}),
                Some("ran `ls`"),
            ),
            (
                json!({"type": "commandExecution", "command": "false", "exitCode": 1}),
                Some("ran `false` (exit code 1)"),
            ),
            (
                json!({"type": "commandExecution", "command": "x", "status": "declined"}),
                Some("ran `x` (failed)"),
            ),
            (
                json!({"type": "fileChange", "changes": [{"path": "a.rs"}, {"path": "b.rs"}]}),
                Some("edited a.rs, b.rs"),
            ),
            (
                json!({"type": "mcpToolCall", "server": "s", "tool": "t", "status": "failed"}),
                Some("called (failed) s/t"),
            ),
            (
                json!({"type": "webSearch", "query": "acp"}),
                Some("searched the web for acp"),
            ),
            (
                json!({"type": "subAgentActivity", "kind": "started", "agentPath": "/root/a/b"}),
                Some("spawned /root/a/b"),
            ),
            (json!({"type": "reasoning", "summary": ["x"]}), None),
            (json!({"type": "agentMessage", "text": "  "}), None),
            (json!({"type": "commandExecution"}), None),
            (json!({"type": 7}), None),
            (json!("not an item"), None),
        ];
        for (item, expected) in cases {
            assert_eq!(line(&item).as_deref(), expected, "{item}");
        }
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(shorten("héllo wörld", 6), "héllo…");
        assert_eq!(shorten("short", 6), "short");
        assert_eq!(
            line(&json!({"type": "agentMessage", "text": "é".repeat(500)}))
                .unwrap()
                .chars()
                .count(),
            LINE_CHARS
        );
    }
}
