//! How a message's text is stored so that no Claude reader takes it for a control message,
//! and read back exactly as it was sent (ADR 0005, "Message text").
//!
//! Claude Code carries its own protocol in the same `text` field as mail: a JSON object with a
//! `type` (`idle_notification`, `shutdown_request`, ...). A text that parses as a JSON object or
//! array is therefore stored with [`PLAIN_TEXT_MARKER`] in front, which no JSON parser accepts
//! and every human and model reads as "what follows is text". acplb readers take the marker off
//! again; [`encode`] and [`decode`] are exact inverses for every text.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Put in front of a text that would otherwise parse as JSON. It starts with a character no
/// JSON text can start with, so Claude's `JSON.parse` fails and the record stays mail.
pub const PLAIN_TEXT_MARKER: &str = "(text) ";

/// The `type`s of Claude Code's control messages. Only records whose whole text is a JSON
/// object with one of these is taken for control traffic; any other text is mail.
const CONTROL_TYPES: &[&str] = &[
    "idle_notification",
    "shutdown_request",
    "shutdown_approved",
    "shutdown_rejected",
    "permission_request",
    "permission_response",
    "sandbox_permission_request",
    "sandbox_permission_response",
    "plan_approval_request",
    "plan_approval_response",
    "task_assignment",
    "task_completed",
    "join_request",
    "join_approved",
    "join_rejected",
    "team_permission_update",
    "mode_set_request",
];

/// The text as acplb stores it: `text`, or [`PLAIN_TEXT_MARKER`] + `text` when `text` (once any
/// markers it already starts with are set aside) could be a JSON object or array.
pub fn encode(text: &str) -> Cow<'_, str> {
    if needs_marker(text) {
        Cow::Owned(format!("{PLAIN_TEXT_MARKER}{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// The text as it was sent: a stored text without the marker [`encode`] added.
pub fn decode(stored: &str) -> &str {
    match stored.strip_prefix(PLAIN_TEXT_MARKER) {
        Some(text) if needs_marker(stored) => text,
        _ => stored,
    }
}

/// Whether a stored text is one of Claude's control messages rather than mail.
pub fn is_control_message(stored: &str) -> bool {
    let t = stored.trim();
    t.starts_with('{')
        && serde_json::from_str::<Map<String, Value>>(t).is_ok_and(|m| {
            m.get("type")
                .and_then(Value::as_str)
                .is_some_and(|ty| CONTROL_TYPES.contains(&ty))
        })
}

/// Whether `text`, markers aside, is shaped like a JSON object or array.
///
/// Deliberately wider than "parses": JavaScript's `JSON.parse` accepts texts `serde_json`
/// refuses (lone surrogates, nesting deeper than 128, numbers out of range), and a JSON object
/// or array always starts with `{` or `[` and ends with `}` or `]` once whitespace is trimmed.
fn needs_marker(text: &str) -> bool {
    let mut rest = text;
    while let Some(after) = rest.strip_prefix(PLAIN_TEXT_MARKER) {
        rest = after;
    }
    let t = rest.trim();
    (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Claude's reader does with a stored text: `JSON.parse`, then look at `type`. Here
    /// the strictest form of it: anything that parses as an object or array counts.
    fn claude_sees_structure(stored: &str) -> bool {
        serde_json::from_str::<Value>(stored).is_ok_and(|v| v.is_object() || v.is_array())
    }

    const SAMPLES: &[&str] = &[
        r#"{"type":"shutdown_request","reason":"done"}"#,
        "  {\"type\": \"idle_notification\"}\n",
        r#"{"kind":"no type at all"}"#,
        "[1, 2, 3]",
        r#"{"type":"x","s":"\ud800"}"#,
        "{not json but braced}",
        "(text) {\"type\":\"shutdown_request\"}",
        "(text) (text) [1]",
        "(text) plain",
        "(text) ",
        "(text)",
        "plain words",
        "[WIP] please review",
        "{ starts like json",
        "",
        "42",
        "\"a json string\"",
        "héllo {\"type\":\"x\"}",
    ];

    #[test]
    fn round_trips_every_text() {
        for text in SAMPLES {
            assert_eq!(decode(&encode(text)), *text, "{text:?}");
        }
    }

    #[test]
    fn nothing_stored_parses_as_a_json_object_or_array() {
        for text in SAMPLES {
            let stored = encode(text);
            assert!(!claude_sees_structure(&stored), "{text:?} stored as {stored:?}");
            assert!(!is_control_message(&stored), "{text:?}");
        }
    }

    #[test]
    fn plain_text_is_stored_as_is_and_json_gets_a_readable_marker() {
        assert_eq!(encode("plain words"), "plain words");
        assert_eq!(encode("[WIP] please review"), "[WIP] please review");
        assert_eq!(
            encode(r#"{"type":"shutdown_request"}"#),
            r#"(text) {"type":"shutdown_request"}"#
        );
        // A text that merely starts with the marker keeps it.
        assert_eq!(encode("(text) plain"), "(text) plain");
        assert_eq!(decode("(text) plain"), "(text) plain");
    }

    #[test]
    fn control_messages_are_the_known_types_only() {
        assert!(is_control_message(
            r#"{"type":"idle_notification","from":"bob","idleReason":"available"}"#
        ));
        assert!(is_control_message(r#" {"type":"shutdown_request"} "#));
        assert!(!is_control_message(r#"{"type":"note","body":"hi"}"#));
        assert!(!is_control_message(r#"{"kind":"x"}"#));
        assert!(!is_control_message("{not json"));
        assert!(!is_control_message("type: idle_notification"));
    }
}
