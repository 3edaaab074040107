//! Secrets acplb was handed (the values of client MCP servers' `env` and `headers`): kept out of
//! every text acplb writes (transcripts, logs, recordings) by exact match, on top of the
//! pattern redactor in [`crate::redact`], which cannot know that `hunter2-prod` is a password.

use std::borrow::Cow;

use agent_client_protocol::v1::schema::McpServer;

use crate::redact::{REDACTED, redact};

/// Values shorter than this are not matched exactly: a `DEBUG=1` or `MODE=fast` is no secret,
/// and replacing every `1` in a transcript would make it unreadable (and break its JSON).
pub const MIN_KNOWN_SECRET_CHARS: usize = 6;

/// A set of known secret values, matched exactly (also in their JSON-escaped spelling).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownSecrets {
    /// Longest first, so a secret containing another is replaced whole.
    needles: Vec<String>,
}

impl KnownSecrets {
    /// The secrets among `values` (those of at least [`MIN_KNOWN_SECRET_CHARS`] characters).
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut needles: Vec<String> = Vec::new();
        for value in values {
            let value = value.as_ref();
            if value.chars().count() < MIN_KNOWN_SECRET_CHARS {
                continue;
            }
            needles.push(value.to_owned());
            // Inside a JSON line the value appears escaped (`"`, `\`, control characters).
            let quoted = serde_json::Value::from(value).to_string();
            let escaped = &quoted[1..quoted.len() - 1];
            if escaped != value {
                needles.push(escaped.to_owned());
            }
        }
        Self::sorted(needles)
    }

    /// Longest first, each once.
    fn sorted(mut needles: Vec<String>) -> Self {
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        Self { needles }
    }

    /// Adds the secrets of `other` (those of another session served by the same process).
    pub fn extend(&mut self, other: &KnownSecrets) {
        if other.needles.iter().all(|n| self.needles.contains(n)) {
            return;
        }
        let mut needles = std::mem::take(&mut self.needles);
        needles.extend(other.needles.iter().cloned());
        *self = Self::sorted(needles);
    }

    /// The values of every `env` entry of stdio servers and every header of HTTP and SSE
    /// servers: acplb cannot tell a token from a harmless setting, so it treats all as secret.
    pub fn from_mcp_servers(servers: &[McpServer]) -> Self {
        let mut values: Vec<&str> = Vec::new();
        for server in servers {
            match server {
                McpServer::Stdio(s) => values.extend(s.env.iter().map(|e| e.value.as_str())),
                McpServer::Http(h) => values.extend(h.headers.iter().map(|h| h.value.as_str())),
                McpServer::Sse(s) => values.extend(s.headers.iter().map(|h| h.value.as_str())),
                _ => {}
            }
        }
        Self::new(values)
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every known secret replaced by [`REDACTED`] (and nothing else touched).
    pub fn redact_known<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.needles.iter().any(|n| text.contains(n.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for needle in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), REDACTED);
            }
        }
        Cow::Owned(out)
    }

    /// `text` with known secrets and every secret shape the pattern redactor knows replaced.
    pub fn redact(&self, text: &str) -> String {
        redact(&self.redact_known(text))
    }

    /// Like [`KnownSecrets::redact`] for one line of JSON (a Codex event, a JSON-RPC message):
    /// the result stays valid JSON. A text cut that would break it (a pattern ending inside an
    /// escape) falls back to redacting each string of the parsed value.
    pub fn redact_json_line(&self, line: &str) -> String {
        json_line(line, &|text| self.redact(text))
    }

    /// Like [`KnownSecrets::redact_known`] for one line of JSON, which stays valid JSON.
    pub fn redact_known_json_line(&self, line: &str) -> String {
        json_line(line, &|text| self.redact_known(text).into_owned())
    }
}

/// `line` through `cut`, or, when that would break the line's JSON, each of its strings.
fn json_line(line: &str, cut: &dyn Fn(&str) -> String) -> String {
    let out = cut(line);
    if out == line || serde_json::from_str::<serde_json::Value>(&out).is_ok() {
        return out;
    }
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(mut value) => {
            cut_strings(&mut value, cut);
            value.to_string()
        }
        // It was not JSON to begin with: the text cut is all there is.
        Err(_) => out,
    }
}

fn cut_strings(value: &mut serde_json::Value, cut: &dyn Fn(&str) -> String) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = cut(s),
        Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, cut)),
        Value::Object(map) => map.values_mut().for_each(|v| cut_strings(v, cut)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{EnvVariable, HttpHeader, McpServerHttp, McpServerStdio};

    use super::*;

    #[test]
    fn known_values_are_replaced_exactly_and_short_ones_ignored() {
        let s = KnownSecrets::new(["hunter2-prod", "1", "hunter2-prod-and-more"]);
        assert_eq!(
            s.redact_known("a hunter2-prod-and-more b hunter2-prod c 1"),
            "a [REDACTED] b [REDACTED] c 1"
        );
        assert!(matches!(s.redact_known("nothing here"), Cow::Borrowed(_)));
        assert!(KnownSecrets::new(["short"]).is_empty());
    }

    #[test]
    fn extended_secrets_are_matched_longest_first_and_kept_once() {
        let mut s = KnownSecrets::new(["hunter2-prod"]);
        s.extend(&KnownSecrets::new(["hunter2-prod-and-more", "hunter2-prod"]));
        s.extend(&KnownSecrets::default());
        assert_eq!(s.needles.len(), 2);
        assert_eq!(
            s.redact_known("a hunter2-prod-and-more b hunter2-prod"),
            "a [REDACTED] b [REDACTED]"
        );
    }

    #[test]
    fn the_json_escaped_spelling_is_found_too() {
        let s = KnownSecrets::new([r#"pa"ss\word"#]);
        let line = serde_json::json!({ "text": r#"the pa"ss\word is"# }).to_string();
        let out = s.redact_json_line(&line);
        assert_eq!(out, r#"{"text":"the [REDACTED] is"}"#);
    }

    #[test]
    fn patterns_apply_as_well_and_json_stays_valid() {
        let s = KnownSecrets::default();
        // A pattern value that would run into an escaped quote.
        let line = serde_json::json!({ "cmd": "export token=ab\"c; ls", "n": 1 }).to_string();
        let out = s.redact_json_line(&line);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(!v["cmd"].as_str().unwrap().contains("ab"), "{out}");
        assert_eq!(v["n"], 1);
    }

    #[test]
    fn mcp_server_env_and_header_values_are_secrets() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("a", "/bin/a")
                    .env(vec![EnvVariable::new("GITHUB_TOKEN", "ghx-not-a-pattern-123")]),
            ),
            McpServer::Http(
                McpServerHttp::new("b", "https://x")
                    .headers(vec![HttpHeader::new("X-Api", "opaque-value-42")]),
            ),
        ];
        let s = KnownSecrets::from_mcp_servers(&servers);
        assert_eq!(
            s.redact("ghx-not-a-pattern-123 / opaque-value-42"),
            "[REDACTED] / [REDACTED]"
        );
    }
}
