//! `item/permissions/requestApproval`: Codex asks for more sandbox permissions (network, file
//! system paths); the answer grants what was asked for the turn or the session, or nothing.

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, ToolCallId, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Map, Value, json};

use super::{Ask, Choices, text, with_lines};
use crate::appserver::decode::AppDecoder;
use crate::render::names;

pub(super) fn permissions(params: &Value, decoder: &AppDecoder) -> Ask {
    let item_id = text(params, "itemId").unwrap_or_default();
    let id = ToolCallId::new(decoder.id(item_id));
    let requested = params.get("permissions").cloned().unwrap_or_default();
    // Grant exactly what was asked: the parts that are present.
    let mut granted = Map::new();
    for key in ["network", "fileSystem"] {
        if let Some(part) = requested.get(key).filter(|p| p.is_object()) {
            granted.insert(key.to_owned(), part.clone());
        }
    }
    let mut fields = ToolCallUpdateFields::new()
        .title(permissions_title(&requested))
        .name(names::REQUEST_PERMISSIONS.to_owned())
        .kind(ToolKind::Other);
    fields.raw_input = Some(requested.clone());
    let lines = text(params, "reason").map(str::to_owned).into_iter().collect();
    let mut choices = Choices::default();
    let grant = |scope: &str| json!({"permissions": granted, "scope": scope});
    choices.add(
        "turn",
        "Allow for this turn".into(),
        PermissionOptionKind::AllowOnce,
        grant("turn"),
        false,
    );
    choices.add(
        "session",
        "Allow for this session".into(),
        PermissionOptionKind::AllowAlways,
        grant("session"),
        true,
    );
    let none = json!({"permissions": {}, "scope": "turn"});
    choices.add(
        "decline",
        "Reject".into(),
        PermissionOptionKind::RejectOnce,
        none.clone(),
        false,
    );
    let tool_call = ToolCallUpdate::new(id, with_lines(fields, lines));
    choices.ask(tool_call, none.clone(), none)
}

/// "Grant network access, write access to /a, read access to /b".
fn permissions_title(requested: &Value) -> String {
    let mut parts = Vec::new();
    if requested.pointer("/network/enabled") == Some(&Value::Bool(true)) {
        parts.push("network access".to_owned());
    }
    for (key, what) in [("write", "write"), ("read", "read")] {
        let paths: Vec<&str> = requested
            .pointer(&format!("/fileSystem/{key}"))
            .and_then(Value::as_array)
            .map(|all| all.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !paths.is_empty() {
            parts.push(format!("{what} access to {}", paths.join(", ")));
        }
    }
    if parts.is_empty() {
        "Grant more permissions".to_owned()
    } else {
        format!("Grant {}", parts.join(", "))
    }
}
