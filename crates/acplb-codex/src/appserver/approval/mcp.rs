//! MCP tool approvals: Codex asks through an MCP elicitation marked
//! `_meta.codex_approval_kind = "mcp_tool_call"`; persistence is asked in the answer's
//! `_meta.persist` (`session` or `always`, as the request's `_meta.persist` offers).

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, ToolCallId, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use super::{Ask, Choices, shown, text, with_lines};
use crate::appserver::decode::AppDecoder;
use crate::render::names;

pub(super) fn mcp_tool(params: &Value, decoder: &AppDecoder) -> Option<Ask> {
    let meta = params.get("_meta")?;
    if text(meta, "codex_approval_kind") != Some("mcp_tool_call") {
        return None;
    }
    let server = text(params, "serverName").unwrap_or_default();
    let tool = text(meta, "tool_name").unwrap_or_default();
    let (id, fields) = if let Some(open) = decoder.open_mcp_call(server, tool) {
        (open.call.tool_call_id.clone(), shown(&open.call))
    } else {
        let id = ToolCallId::new(decoder.id(&format!("mcp_approval_{server}_{tool}")));
        let mut fields = ToolCallUpdateFields::new()
            .title(format!("{server}.{tool}"))
            .name(names::mcp(server, tool))
            .kind(ToolKind::Other);
        fields.raw_input = meta.get("tool_params").cloned();
        (id, fields)
    };
    let lines = text(params, "message").map(str::to_owned).into_iter().collect();
    let persist: Vec<&str> = match meta.get("persist") {
        Some(Value::Array(all)) => all.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(one)) => vec![one.as_str()],
        _ => Vec::new(),
    };
    let accept = |persist: Option<&str>| {
        let meta = persist.map_or(Value::Null, |p| json!({"persist": p}));
        json!({"action": "accept", "content": {}, "_meta": meta})
    };
    let mut choices = Choices::default();
    choices.add(
        "accept",
        "Allow once".into(),
        PermissionOptionKind::AllowOnce,
        accept(None),
        false,
    );
    if persist.contains(&"session") {
        let name = "Allow for this session".into();
        choices.add(
            "acceptForSession",
            name,
            PermissionOptionKind::AllowAlways,
            accept(Some("session")),
            true,
        );
    }
    if persist.contains(&"always") {
        let name = "Always allow".into();
        choices.add(
            "acceptAlways",
            name,
            PermissionOptionKind::AllowAlways,
            accept(Some("always")),
            false,
        );
    }
    let decline = json!({"action": "decline", "content": null, "_meta": null});
    choices.add(
        "decline",
        "Reject".into(),
        PermissionOptionKind::RejectOnce,
        decline.clone(),
        false,
    );
    let tool_call = ToolCallUpdate::new(id, with_lines(fields, lines));
    let cancel = json!({"action": "cancel", "content": null, "_meta": null});
    Some(choices.ask(tool_call, decline, cancel))
}
