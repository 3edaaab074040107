//! Tool call content in v2's shapes (ADR 0048): a v1 diff (old and new text) becomes v2's
//! structured change plus a git patch, and Zed's terminal metadata (`terminal_info`,
//! `terminal_output`, `terminal_exit`, ADR 0033) becomes v2's agent-owned terminal updates.

use base64::Engine as _;
use serde_json::{Map, Value, json};

/// One v1 tool call content item in v2's shape (only diffs differ).
pub(super) fn to_v2(item: &mut Value) {
    let Value::Object(fields) = item else {
        return;
    };
    if fields.get("type").and_then(Value::as_str) != Some("diff") {
        return;
    }
    let path = fields
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let old = fields.get("oldText").and_then(Value::as_str).map(str::to_owned);
    let new = fields
        .get("newText")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let operation = match &old {
        None => "add",
        // acplb's v1 diffs say a deleted file this way (no v1 field says it otherwise).
        Some(old) if new.is_empty() && !old.is_empty() => "delete",
        Some(_) => "modify",
    };
    let mut diff = Map::new();
    diff.insert("type".into(), json!("diff"));
    diff.insert("changes".into(), json!([{"operation": operation, "path": path}]));
    diff.insert(
        "patch".into(),
        json!({"format": "git_patch", "text": git_patch(&path, old.as_deref(), &new)}),
    );
    super::updates::keep_meta(&mut diff, fields);
    *fields = diff;
}

/// A git-style patch turning `old` (none: a new file) into `new` at `path`: one hunk, the lines
/// between the common start and end with up to three lines of context around them. (Not a
/// minimal diff: a diff crate costs acplb's every session its code pages, ADR 0048.)
fn git_patch(path: &str, old: Option<&str>, new: &str) -> String {
    let name = path.trim_start_matches('/');
    let (from, to) = match old {
        None => ("/dev/null".to_owned(), format!("b/{name}")),
        Some(_) if new.is_empty() => (format!("a/{name}"), "/dev/null".to_owned()),
        Some(_) => (format!("a/{name}"), format!("b/{name}")),
    };
    let a: Vec<&str> = old.unwrap_or_default().split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let same_start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let most_end = a.len().min(b.len()) - same_start;
    let same_end = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(most_end)
        .take_while(|(x, y)| x == y)
        .count();
    let start = same_start.saturating_sub(3);
    let after = same_end.min(3);
    let (a_end, b_end) = (a.len() - same_end + after, b.len() - same_end + after);
    let range = |first: usize, count: usize| {
        if count == 0 {
            format!("{first},0")
        } else {
            format!("{},{count}", first + 1)
        }
    };
    let mut text = format!(
        "diff --git a/{name} b/{name}\n--- {from}\n+++ {to}\n@@ -{} +{} @@\n",
        range(start, a_end - start),
        range(start, b_end - start)
    );
    let line = |text: &mut String, mark: char, l: &str| {
        text.push(mark);
        text.push_str(l);
        if !l.ends_with('\n') {
            text.push_str("\n\\ No newline at end of file\n");
        }
    };
    let (a_change_end, b_change_end) = (a.len() - same_end, b.len() - same_end);
    for l in &a[start..same_start] {
        line(&mut text, ' ', l);
    }
    for l in &a[same_start..a_change_end] {
        line(&mut text, '-', l);
    }
    for l in &b[same_start..b_change_end] {
        line(&mut text, '+', l);
    }
    for l in &a[a_change_end..a_end] {
        line(&mut text, ' ', l);
    }
    text
}

/// The terminal a v1 tool call update drives, taken out of its `_meta`.
#[derive(Debug, Default)]
pub(super) struct Terminal {
    info: Option<Map<String, Value>>,
    output: Option<Map<String, Value>>,
    exit: Option<Map<String, Value>>,
}

impl Terminal {
    /// Takes Zed's terminal keys out of `update._meta` (dropping an emptied `_meta`).
    pub(super) fn take(update: &mut Map<String, Value>) -> Self {
        let Some(Value::Object(meta)) = update.get_mut("_meta") else {
            return Self::default();
        };
        let mut part = |key: &str| match meta.remove(key) {
            Some(Value::Object(part)) if part.get("terminal_id").is_some_and(Value::is_string) => Some(part),
            _ => None,
        };
        let terminal = Self {
            info: part("terminal_info"),
            output: part("terminal_output"),
            exit: part("terminal_exit"),
        };
        if meta.is_empty() {
            update.remove("_meta");
        }
        terminal
    }

    fn id(&self) -> Option<Value> {
        [&self.info, &self.output, &self.exit]
            .into_iter()
            .flatten()
            .find_map(|part| part.get("terminal_id").cloned())
    }

    /// The `terminal_update` creating the terminal (its command and directory), sent before
    /// the tool call that shows it.
    pub(super) fn created(&self, raw_input: Option<&Value>) -> Option<Value> {
        let info = self.info.as_ref()?;
        let mut update = Map::new();
        update.insert("sessionUpdate".into(), json!("terminal_update"));
        update.insert("terminalId".into(), self.id()?);
        if let Some(command) = raw_input.and_then(command_line) {
            update.insert("command".into(), json!(command));
        }
        if let Some(cwd) = info
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| c.starts_with('/'))
        {
            update.insert("cwd".into(), json!(cwd));
        }
        Some(Value::Object(update))
    }

    /// The output appended (base64, as v2 carries bytes), then the exit, after the tool call.
    pub(super) fn output_and_exit(&self) -> Vec<Value> {
        let Some(id) = self.id() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(data) = self
            .output
            .as_ref()
            .and_then(|o| o.get("data"))
            .and_then(Value::as_str)
        {
            let data = base64::engine::general_purpose::STANDARD.encode(data);
            out.push(json!({"sessionUpdate": "terminal_output_chunk", "terminalId": id, "data": data}));
        }
        if let Some(exit) = &self.exit {
            let status = json!({
                "exitCode": exit.get("exit_code").filter(|c| c.is_u64() || c.is_i64()),
                "signal": exit.get("signal").filter(|s| s.is_string()),
            });
            out.push(json!({"sessionUpdate": "terminal_update", "terminalId": id, "exitStatus": status}));
        }
        out
    }
}

/// The command a tool call's raw input names, as one line.
fn command_line(raw_input: &Value) -> Option<String> {
    match raw_input.get("command")? {
        Value::String(command) => Some(command.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_diff_becomes_a_change_and_a_git_patch() {
        let mut item = json!({"type": "diff", "path": "/w/a.txt", "oldText": "one\n", "newText": "two\n"});
        to_v2(&mut item);
        assert_eq!(
            item["changes"],
            json!([{"operation": "modify", "path": "/w/a.txt"}])
        );
        let text = item["patch"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("diff --git a/w/a.txt b/w/a.txt\n--- a/w/a.txt\n+++ b/w/a.txt\n"),
            "{text}"
        );
        assert!(text.contains("@@ -1,1 +1,1 @@\n-one\n+two\n"), "{text}");
        let mut middle = json!({"type": "diff", "path": "/w/m.txt", "oldText": "1\n2\n3\n4\n5\nx\n6\n7\n8\n9\n", "newText": "1\n2\n3\n4\n5\ny\n6\n7\n8\n9\n"});
        to_v2(&mut middle);
        let text = middle["patch"]["text"].as_str().unwrap();
        assert!(
            text.ends_with("@@ -3,7 +3,7 @@\n 3\n 4\n 5\n-x\n+y\n 6\n 7\n 8\n"),
            "{text}"
        );
        let mut added = json!({"type": "diff", "path": "/w/n.txt", "newText": "x\n"});
        to_v2(&mut added);
        assert_eq!(added["changes"][0]["operation"], "add");
        assert!(added["patch"]["text"].as_str().unwrap().contains("--- /dev/null"));
        let mut deleted = json!({"type": "diff", "path": "/w/d.txt", "oldText": "x\n", "newText": ""});
        to_v2(&mut deleted);
        assert_eq!(deleted["changes"][0]["operation"], "delete");
    }

    #[test]
    fn terminal_metadata_becomes_terminal_updates() {
        let mut update = json!({"toolCallId": "c", "_meta": {
            "terminal_info": {"terminal_id": "c", "cwd": "/w"},
            "terminal_output": {"terminal_id": "c", "data": "hi\n"},
            "terminal_exit": {"terminal_id": "c", "exit_code": 0, "signal": null},
            "other": 1,
        }});
        let terminal = Terminal::take(update.as_object_mut().unwrap());
        assert_eq!(update["_meta"], json!({"other": 1}));
        let created = terminal
            .created(Some(&json!({"command": ["ls", "-la"]})))
            .unwrap();
        assert_eq!(
            created,
            json!({"sessionUpdate": "terminal_update", "terminalId": "c", "command": "ls -la", "cwd": "/w"})
        );
        let rest = terminal.output_and_exit();
        assert_eq!(rest[0]["data"], "aGkK");
        assert_eq!(rest[1]["exitStatus"], json!({"exitCode": 0, "signal": null}));
    }

    #[test]
    fn malformed_terminal_metadata_is_left_out() {
        let mut update = json!({"_meta": {"terminal_output": {"data": "no id"}}});
        let terminal = Terminal::take(update.as_object_mut().unwrap());
        assert!(terminal.output_and_exit().is_empty());
        assert!(update.get("_meta").is_none());
    }
}
