//! One inbox record: building ours, and reading anyone's (key, system traffic, envelope).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::text;
use ulid::Ulid;

/// Characters of the text kept in an automatic summary before `...` is added.
const AUTO_SUMMARY_CHARS: usize = 60;

/// A message as handed to the agent: who sent it, the (possibly cut) text, when, and its key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailEnvelope {
    /// The sender's name (`from`).
    pub from: String,
    /// The text, cut to the read limit with a visible marker.
    pub message: String,
    /// The record's timestamp as written by its sender.
    pub timestamp: String,
    /// The stable key: ATM ULID, else `message_id`, else `messageId`, else a content hash.
    pub message_id: String,
}

/// Builds the record acplb appends: Claude's native keys first, then the ids ATM 0.x
/// (`message_id`, a UUID) and ATM 1.1.x (`metadata.atm.messageId`, a ULID) look for. The text
/// is stored so that Claude never takes it for a control message ([`crate::text::encode`]).
pub(crate) fn build(from: &str, text: &str, summary: Option<&str>, id: Ulid, source_team: &str) -> Value {
    let summary = summary.map_or_else(|| auto_summary(text), str::to_owned);
    json!({
        "from": from,
        "text": crate::text::encode(text),
        "timestamp": crate::time::format_millis(id.timestamp_ms()),
        "read": false,
        "summary": summary,
        "message_id": legacy_uuid(id),
        "metadata": { "atm": { "messageId": id.to_string(), "sourceTeam": source_team } },
    })
}

/// The UUID made from the ULID's 16 bytes, the form ATM 1.1.x's CLI shows and `atm ack` accepts.
pub fn legacy_uuid(id: Ulid) -> String {
    uuid::Uuid::from_bytes(id.to_bytes()).to_string()
}

/// The first 60 characters plus `...` when the text is longer, else the whole text.
pub fn auto_summary(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(AUTO_SUMMARY_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

/// Cuts `text` to `max_chars` characters, appending ` [...truncated N chars]` when it cut.
pub fn truncate(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let head: String = text.chars().take(max_chars).collect();
    format!("{head} [...truncated {} chars]", total - max_chars)
}

/// The fields of a record that reading needs, with its key resolved.
#[derive(Debug, Clone)]
pub(crate) struct RecordView {
    pub(crate) from: String,
    /// The text as stored (see [`crate::text`]).
    pub(crate) text: String,
    pub(crate) timestamp: String,
    pub(crate) read: bool,
    pub(crate) key: String,
}

impl RecordView {
    /// Reads a record's raw JSON; `None` for elements that are not objects.
    pub(crate) fn parse(raw: &str) -> Option<Self> {
        let map: Map<String, Value> = serde_json::from_str(raw).ok()?;
        Some(Self::from_map(&map))
    }

    pub(crate) fn from_map(map: &Map<String, Value>) -> Self {
        let s = |k: &str| map.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        let from = s("from");
        // atm-agent-mcp reads `content` as an alias of `text`.
        let text = map
            .get("text")
            .or_else(|| map.get("content"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let timestamp = s("timestamp");
        let key = explicit_key(map).unwrap_or_else(|| content_key(&from, &timestamp, text));
        Self {
            read: map.get("read") == Some(&Value::Bool(true)),
            text: text.to_owned(),
            from,
            timestamp,
            key,
        }
    }

    /// Whether this record is one of Claude's control messages rather than mail.
    pub(crate) fn is_system(&self) -> bool {
        text::is_control_message(&self.text)
    }

    /// The envelope handed to the agent: the text as it was sent, cut to `max_chars`.
    pub(crate) fn envelope(&self, max_chars: usize) -> MailEnvelope {
        MailEnvelope {
            from: self.from.clone(),
            message: truncate(text::decode(&self.text), max_chars),
            timestamp: self.timestamp.clone(),
            message_id: self.key.clone(),
        }
    }
}

fn explicit_key(map: &Map<String, Value>) -> Option<String> {
    let non_empty = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    non_empty(
        map.get("metadata")
            .and_then(|m| m.get("atm"))
            .and_then(|a| a.get("messageId")),
    )
    .or_else(|| non_empty(map.get("message_id")))
    .or_else(|| non_empty(map.get("messageId")))
}

/// A stable key for records without an id (Claude-native mail): FNV-1a 128 of `from|timestamp|text`.
///
/// FNV is fixed by its spec, so the key is the same in every process and build, which is what
/// matching a receipt against a later read needs.
pub fn content_key(from: &str, timestamp: &str, text: &str) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut h = OFFSET;
    for part in [from.as_bytes(), b"|", timestamp.as_bytes(), b"|", text.as_bytes()] {
        for &b in part {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    format!("fnv-{h:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_interop_record() {
        let id: Ulid = "01M80K6HWCSXJQCY9FQCT0HJJP".parse().unwrap();
        let rec = build("codex", "hi", None, id, "demo");
        let keys: Vec<_> = rec.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "from",
                "text",
                "timestamp",
                "read",
                "summary",
                "message_id",
                "metadata"
            ]
        );
        assert_eq!(rec["timestamp"], crate::time::format_millis(id.timestamp_ms()));
        // ATM 1.1.x shows this ULID as `01a20133-478c-…` (README §3).
        assert!(rec["message_id"].as_str().unwrap().starts_with("01a20133-478c-"));
        assert_eq!(rec["metadata"]["atm"]["messageId"], "01M80K6HWCSXJQCY9FQCT0HJJP");
        assert_eq!(rec["summary"], "hi");
    }

    #[test]
    fn summary_and_truncation() {
        let long = "x".repeat(61);
        assert_eq!(auto_summary(&long), format!("{}...", "x".repeat(60)));
        assert_eq!(auto_summary(&"x".repeat(60)), "x".repeat(60));
        assert_eq!(truncate("héllo wörld", 5), "héllo [...truncated 6 chars]");
        assert_eq!(truncate("short", 5), "short");
    }

    #[test]
    fn key_precedence() {
        let m = |v: Value| RecordView::from_map(v.as_object().unwrap()).key;
        let all = json!({"metadata":{"atm":{"messageId":"U"}},"message_id":"M","messageId":"C"});
        assert_eq!(m(all), "U");
        assert_eq!(m(json!({"message_id":"M","messageId":"C"})), "M");
        assert_eq!(m(json!({"messageId":"C"})), "C");
        let native = m(json!({"from":"a","timestamp":"t","text":"x"}));
        assert_eq!(native, content_key("a", "t", "x"));
        assert_ne!(native, content_key("a", "t", "y"));
    }

    #[test]
    fn json_texts_are_stored_with_the_marker_and_read_back_as_sent() {
        let id = Ulid::new();
        let sent = r#"{"type":"shutdown_request","reason":"bye"}"#;
        let rec = build("codex", sent, None, id, "demo");
        assert_eq!(rec["text"], format!("(text) {sent}"));
        assert_eq!(rec["summary"], sent, "the summary is of the text as sent");
        let view = RecordView::from_map(rec.as_object().unwrap());
        assert!(!view.is_system());
        assert_eq!(view.envelope(4096).message, sent);
    }
}
