//! Normalization: what differs between two runs of the same session (session and thread ids,
//! tool call ids, the workspace and other temporary paths, the home and playback paths) is
//! replaced by placeholders such as `<session-1>`, `<thread-1>`, `<tool-1>`, `<cwd>`, `<tmp>`,
//! so a replay's output compares byte for byte with a recording's.

use std::collections::HashMap;

use serde_json::Value;

/// Replaces run-specific strings; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    /// Known strings and their placeholders, longest first.
    known: Vec<(String, String)>,
    /// Directories whose direct children are temporary (`/tmp`, `$TMPDIR`).
    temp_roots: Vec<String>,
    tool_ids: HashMap<String, String>,
}

/// Characters that continue a path segment or an id: a match must not be followed by one.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

impl Normalizer {
    /// A normalizer for temporary paths only (under `/tmp` and `$TMPDIR`).
    pub fn new() -> Self {
        let mut temp_roots = vec!["/tmp".to_owned()];
        let tmpdir = std::env::temp_dir().display().to_string();
        let tmpdir = tmpdir.trim_end_matches('/').to_owned();
        if !tmpdir.is_empty() && !temp_roots.contains(&tmpdir) {
            temp_roots.push(tmpdir);
        }
        Self {
            known: Vec::new(),
            temp_roots,
            tool_ids: HashMap::new(),
        }
    }

    /// Replaces `from` (as a whole path or id) with `to` from now on; empty or one-character
    /// strings are ignored, as is `/`.
    pub fn replace(&mut self, from: impl Into<String>, to: impl Into<String>) {
        let from = from.into();
        let from = if from.len() > 1 {
            from.trim_end_matches('/').to_owned()
        } else {
            from
        };
        if from.len() < 2 || self.known.iter().any(|(f, _)| *f == from) {
            return;
        }
        self.known.push((from, to.into()));
        self.known.sort_by(|a, b| b.0.len().cmp(&a.0.len()));
    }

    /// Normalizes free text: known strings first, then `<tmp-root>/<name>` → `<tmp>`.
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for (from, to) in &self.known {
            if out.contains(from.as_str()) {
                out = replace_whole(&out, from, to);
            }
        }
        for root in &self.temp_roots {
            if out.contains(root.as_str()) {
                out = replace_temp(&out, root);
            }
        }
        out
    }

    /// Normalizes one JSON message: every string as [`Self::text`], and `toolCallId` values
    /// numbered in order of first appearance. A line that is not JSON is normalized as text.
    pub fn json_line(&mut self, line: &str) -> String {
        match serde_json::from_str::<Value>(line) {
            Ok(mut value) => {
                self.value(&mut value, None);
                value.to_string()
            }
            Err(_) => self.text(line),
        }
    }

    /// Normalizes a JSON value in place.
    pub fn value(&mut self, value: &mut Value, key: Option<&str>) {
        match value {
            Value::String(s) if key == Some("toolCallId") => {
                let next = format!("<tool-{}>", self.tool_ids.len() + 1);
                *s = self.tool_ids.entry(s.clone()).or_insert(next).clone();
            }
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => {
                for item in items {
                    self.value(item, None);
                }
            }
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.value(v, Some(k));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// Replaces every occurrence of `from` that is not part of a longer name with `to`.
fn replace_whole(s: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(from) {
        let before = rest[..i].chars().next_back().or_else(|| out.chars().next_back());
        let after = rest[i + from.len()..].chars().next();
        out.push_str(&rest[..i]);
        if !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char) {
            out.push_str(to);
        } else {
            out.push_str(from);
        }
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Replaces `<root>/<name>` (a temporary file or directory) with `<tmp>`.
fn replace_temp(s: &str, root: &str) -> String {
    let prefix = format!("{root}/");
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(&prefix) {
        let before = rest[..i].chars().next_back().or_else(|| out.chars().next_back());
        let name_len = rest[i + prefix.len()..]
            .find(|c: char| !is_name_char(c))
            .unwrap_or(rest.len() - i - prefix.len());
        out.push_str(&rest[..i]);
        if name_len > 0 && !before.is_some_and(is_name_char) {
            out.push_str("<tmp>");
        } else {
            out.push_str(&rest[i..i + prefix.len() + name_len]);
        }
        rest = &rest[i + prefix.len() + name_len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm() -> Normalizer {
        let mut n = Normalizer::new();
        n.replace("/tmp/acplb-codex-abc/repo", "<cwd>");
        n.replace("/root", "<home>");
        n.replace("0199-aaaa", "<session-1>");
        n
    }

    #[test]
    fn texts() {
        let n = norm();
        let cases = [
            ("cd /tmp/acplb-codex-abc/repo && ls", "cd <cwd> && ls"),
            ("/tmp/acplb-codex-abc/repo/README.md", "<cwd>/README.md"),
            ("/tmp/acplb-codex-abc/repo2", "<tmp>/repo2"),
            ("home /tmp/acplb-codex-abc/home/x", "home <tmp>/home/x"),
            ("/root/.pyenv and /rootfs and /x/root", "<home>/.pyenv and /rootfs and /x/root"),
            ("under \"/tmp\" only", "under \"/tmp\" only"),
            ("s=0199-aaaa,", "s=<session-1>,"),
            ("s=0199-aaaab", "s=0199-aaaab"),
        ];
        for (input, expected) in cases {
            assert_eq!(n.text(input), expected, "{input}");
        }
    }

    #[test]
    fn json_ids_and_strings() {
        let mut n = norm();
        let a = n.json_line(
            r#"{"params":{"sessionId":"0199-aaaa","update":{"toolCallId":"t1-item_2","locations":[{"path":"/tmp/acplb-codex-abc/repo/a"}]}}}"#,
        );
        assert_eq!(
            a,
            r#"{"params":{"sessionId":"<session-1>","update":{"toolCallId":"<tool-1>","locations":[{"path":"<cwd>/a"}]}}}"#
        );
        let b = n.json_line(r#"{"toolCallId":"t2-item_0"}"#);
        let c = n.json_line(r#"{"toolCallId":"t1-item_2"}"#);
        assert_eq!((b.as_str(), c.as_str()), (r#"{"toolCallId":"<tool-2>"}"#, r#"{"toolCallId":"<tool-1>"}"#));
        assert_eq!(n.json_line("not json /root"), "not json <home>");
    }
}
