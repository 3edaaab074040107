//! Normalization: what differs between two runs of the same session (session and thread ids,
//! tool call ids, the workspace and other temporary paths, the home and playback paths,
//! timestamps and durations) is replaced by placeholders such as `<session-1>`, `<thread-1>`,
//! `<tool-1>`, `<cwd>`, `<tmp>`, `<time>`, `<duration>`, so a replay's output compares byte for
//! byte with a recording's.

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
    request_ids: HashMap<String, String>,
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
            request_ids: HashMap::new(),
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
        self.known.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    }

    /// Normalizes free text: known strings first, then `<tmp-root>/<name>` → `<tmp>`, then
    /// RFC 3339 timestamps → `<time>`.
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
        if out.contains('T') && out.contains(':') {
            out = replace_timestamps(&out);
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
            // acplb's own requests to the client (permission prompts) have random UUID ids.
            Value::String(s) if matches!(key, Some("id" | "requestId")) && is_uuid(s) => {
                let next = format!("<request-{}>", self.request_ids.len() + 1);
                let placeholder = self.request_ids.entry(std::mem::take(s)).or_insert(next);
                s.push_str(placeholder);
            }
            Value::String(s) if key == Some("toolCallId") => {
                let next = format!("<tool-{}>", self.tool_ids.len() + 1);
                let placeholder = self.tool_ids.entry(std::mem::take(s)).or_insert(next);
                s.push_str(placeholder);
            }
            Value::String(s) => *s = self.text(s),
            Value::Number(_) if key.is_some_and(is_duration_key) => *value = "<duration>".into(),
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

/// A UUID in its hyphenated form (8-4-4-4-12 hex digits).
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// Keys whose numbers measure time (`duration_ms`, `elapsedMs`, `t_ms`, `timestamp`, ...).
fn is_duration_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    key.ends_with("_ms")
        || key.ends_with("Ms")
        || lower.contains("duration")
        || lower.contains("elapsed")
        || lower == "timestamp"
        || lower == "time"
}

/// Replaces `YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]` with `<time>`.
fn replace_timestamps(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while i + 19 <= bytes.len() {
        let Some(len) = timestamp_at(&bytes[i..]) else {
            i += 1;
            continue;
        };
        out.push_str(&s[copied..i]);
        out.push_str("<time>");
        i += len;
        copied = i;
    }
    out.push_str(&s[copied..]);
    out
}

/// The length of a timestamp starting at `b[0]`, if one does.
fn timestamp_at(b: &[u8]) -> Option<usize> {
    const SHAPE: &[u8; 19] = b"dddd-dd-ddTdd:dd:dd";
    let fits = SHAPE.iter().zip(b).all(|(want, got)| match want {
        b'd' => got.is_ascii_digit(),
        other => other == got,
    });
    if !fits {
        return None;
    }
    let mut len = 19;
    if b.get(len) == Some(&b'.') {
        let digits = b[len + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            len += 1 + digits;
        }
    }
    match b.get(len) {
        Some(b'Z') => len += 1,
        Some(b'+' | b'-') if b.len() >= len + 6 && b[len + 3] == b':' => len += 6,
        _ => {}
    }
    Some(len)
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
        n.replace("/home/dev", "<home>");
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
            (
                "/home/dev/.pyenv and /home/devfs and /x/home/dev",
                "<home>/.pyenv and /home/devfs and /x/home/dev",
            ),
            ("under \"/tmp\" only", "under \"/tmp\" only"),
            ("s=0199-aaaa,", "s=<session-1>,"),
            ("s=0199-aaaab", "s=0199-aaaab"),
            ("at 2026-11-22T04:56:03.451830Z ERROR x", "at <time> ERROR x"),
            (
                "2026-11-22T04:56:03+02:00 and 2026-11-22T04:56",
                "<time> and 2026-11-22T04:56",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(n.text(input), expected, "{input}");
        }
    }

    #[test]
    fn request_ids_of_acplbs_own_requests_are_numbered() {
        let mut n = norm();
        let ask = r#"{"id":"6aa9b811-5335-45ba-95ec-6c0a92c31650","method":"session/request_permission"}"#;
        let cancel =
            r#"{"method":"$/cancel_request","params":{"requestId":"6aa9b811-5335-45ba-95ec-6c0a92c31650"}}"#;
        assert_eq!(
            n.json_line(ask),
            r#"{"id":"<request-1>","method":"session/request_permission"}"#
        );
        assert_eq!(
            n.json_line(cancel),
            r#"{"method":"$/cancel_request","params":{"requestId":"<request-1>"}}"#
        );
        assert_eq!(
            n.json_line(r#"{"id":"msg-1"}"#),
            r#"{"id":"msg-1"}"#,
            "not a UUID"
        );
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
        assert_eq!(
            (b.as_str(), c.as_str()),
            (r#"{"toolCallId":"<tool-2>"}"#, r#"{"toolCallId":"<tool-1>"}"#)
        );
        assert_eq!(n.json_line("not json /home/dev"), "not json <home>");
        assert_eq!(
            n.json_line(r#"{"_meta":{"duration_ms":12,"elapsedMs":3,"items":4,"time":5}}"#),
            r#"{"_meta":{"duration_ms":"<duration>","elapsedMs":"<duration>","items":4,"time":"<duration>"}}"#
        );
    }
}
