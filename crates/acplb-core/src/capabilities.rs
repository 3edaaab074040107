//! What a client declared beyond ACP's typed capabilities: the conventions it advertises in
//! `clientCapabilities._meta`.

use agent_client_protocol::v1::schema::ClientCapabilities;
use serde_json::Value;

/// The `_meta` key with which Zed asks for command output as live terminals (ADR 0033).
pub const TERMINAL_OUTPUT: &str = "terminal_output";

/// Whether the client renders command output as Zed's display-only terminals: it advertised
/// `clientCapabilities._meta.terminal_output: true`. Any other value (absent, `false`, the
/// string `"true"`, an object) means no: the client keeps text content.
pub fn terminal_output(client: &ClientCapabilities) -> bool {
    match client.meta.as_ref().and_then(|m| m.get(TERMINAL_OUTPUT)) {
        Some(Value::Bool(b)) => *b,
        None => false,
        Some(other) => {
            tracing::warn!(
                value = %other,
                "clientCapabilities._meta.terminal_output is not a boolean; command output stays text"
            );
            false
        }
    }
}

/// Whether the client takes ACP's compaction updates: it advertised
/// `clientCapabilities.session.compaction` as an object (`{}`). The SDK reads any other value
/// (`true`, a string) as absent, so such a client keeps notices.
pub fn compaction(client: &ClientCapabilities) -> bool {
    client.session.as_ref().is_some_and(|s| s.compaction.is_some())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn caps(meta: &Value) -> ClientCapabilities {
        serde_json::from_value(json!({ "_meta": meta })).unwrap()
    }

    #[test]
    fn only_a_true_boolean_asks_for_terminals() {
        assert!(terminal_output(&caps(&json!({"terminal_output": true}))));
        assert!(!terminal_output(&caps(&json!({"terminal_output": false}))));
        assert!(!terminal_output(&caps(&json!({"terminal_output": "true"}))));
        let object = json!({"terminal_output": {"enabled": true}});
        assert!(!terminal_output(&caps(&object)));
        assert!(!terminal_output(&caps(&json!({"terminal_output_delta": true}))));
        assert!(!terminal_output(&ClientCapabilities::default()));
    }

    #[test]
    fn only_an_object_asks_for_compaction_updates() {
        let with = |session: &Value| -> ClientCapabilities {
            serde_json::from_value(json!({ "session": session })).unwrap()
        };
        assert!(compaction(&with(&json!({"compaction": {}}))));
        assert!(!compaction(&with(&json!({"compaction": null}))));
        assert!(!compaction(&with(&json!({"compaction": true}))));
        assert!(!compaction(&with(&json!({"compaction": "yes"}))));
        assert!(!compaction(&with(&json!({}))));
        assert!(!compaction(&ClientCapabilities::default()));
    }
}
