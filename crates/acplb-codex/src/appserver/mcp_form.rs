//! An MCP server asking the user for data (`mcpServer/elicitation/request` in `form` mode, not
//! Codex's tool approvals, which `approval/mcp.rs` handles): an ACP form for a client that shows
//! forms (ACP's form schema is MCP's, so the schema passes through), the answer passed back as
//! the MCP server reads it. Anything else is declined, as before (ADR 0026).

use acplb_core::provider::{ElicitAnswer, ElicitAsk};
use agent_client_protocol::v1::schema::ElicitationSchema;
use serde_json::{Value, json};

/// The ACP form of an MCP form request; `None` for another mode or a schema with no field
/// ACP can show.
pub(crate) fn form(params: &Value) -> Option<ElicitAsk> {
    if params.get("mode").and_then(Value::as_str) != Some("form") {
        return None;
    }
    let schema: ElicitationSchema = serde_json::from_value(params.get("requestedSchema")?.clone()).ok()?;
    if schema.properties.is_empty() {
        return None;
    }
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
    let server = Some(text("serverName"))
        .filter(|s| !s.is_empty())
        .unwrap_or("An MCP server");
    Some(ElicitAsk {
        message: format!("{server} asks: {}", text("message")),
        schema,
        tool_call_id: None,
    })
}

/// The `result` the MCP server gets for the editor's answer (an error or a gone client
/// declines).
pub(crate) fn answer(answer: &ElicitAnswer) -> Value {
    match answer {
        ElicitAnswer::Accepted(content) => json!({ "action": "accept", "content": content, "_meta": null }),
        ElicitAnswer::Cancelled => cancelled(),
        ElicitAnswer::Declined | ElicitAnswer::Unanswered(_) => declined(),
    }
}

/// The `result` declining the request.
pub(crate) fn declined() -> Value {
    json!({ "action": "decline", "content": null, "_meta": null })
}

/// The `result` when the turn is cancelled with the form open.
pub(crate) fn cancelled() -> Value {
    json!({ "action": "cancel", "content": null, "_meta": null })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_passes_through_and_answers_go_back() {
        let params = json!({"threadId": "t", "turnId": null, "serverName": "db", "mode": "form", "_meta": null,
            "message": "Which table?", "requestedSchema": {"type": "object",
            "properties": {"table": {"type": "string", "enum": ["a", "b"]}, "limit": {"type": "integer"}},
            "required": ["table"]}});
        let ask = form(&params).unwrap();
        assert_eq!(ask.message, "db asks: Which table?");
        let schema = serde_json::to_value(&ask.schema).unwrap();
        assert_eq!(schema["properties"]["table"]["enum"], json!(["a", "b"]));
        assert_eq!(schema["required"], json!(["table"]));
        let content = json!({"table": "a", "limit": 3}).as_object().unwrap().clone();
        assert_eq!(
            answer(&ElicitAnswer::Accepted(content)),
            json!({"action": "accept", "content": {"table": "a", "limit": 3}, "_meta": null})
        );
        assert_eq!(answer(&ElicitAnswer::Cancelled)["action"], "cancel");
        assert_eq!(answer(&ElicitAnswer::Unanswered("x".into()))["action"], "decline");
    }

    #[test]
    fn other_modes_and_unreadable_schemas_are_not_forms() {
        for params in [
            json!({"mode": "url", "message": "go", "url": "https://x", "elicitationId": "e"}),
            json!({"mode": "form", "message": "m", "requestedSchema": 5}),
            json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}}),
            json!({"mode": "form", "message": "m"}),
        ] {
            assert!(form(&params).is_none(), "{params}");
        }
    }
}
