//! Unit tests of the approval mapping for the requests the fixtures do not cover: defaults of
//! older servers, network and permission requests, odd and malformed input.

use serde_json::{Value, json};

use super::*;
use crate::appserver::decode::DecoderOptions;

fn decoder() -> AppDecoder {
    AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        ..DecoderOptions::new("/workspace")
    })
}

fn ids(ask: &Ask) -> Vec<String> {
    ask.options.iter().map(|o| o.option_id.to_string()).collect()
}

fn json_of(ask: &Ask) -> Value {
    serde_json::to_value(&ask.tool_call).unwrap()
}

#[test]
fn other_requests_are_not_approvals() {
    let d = decoder();
    for method in [
        "item/tool/requestUserInput",
        "item/tool/call",
        "execCommandApproval",
        "nope",
    ] {
        assert!(Ask::from_request(method, &json!({}), &d).is_none(), "{method}");
    }
    // An elicitation that asks for form input is not an approval either.
    let form = json!({"serverName": "s", "mode": "form", "message": "Your name?", "_meta": null,
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}});
    assert!(Ask::from_request("mcpServer/elicitation/request", &form, &d).is_none());
}

#[test]
fn a_command_request_without_a_started_item_shows_the_command() {
    let params = json!({"kind": "command", "itemId": "call_7", "command": "/bin/bash -lc 'cat README.md'",
        "cwd": "/workspace", "commandActions": [{"type": "read", "command": "cat README.md", "name": "README.md",
        "path": "README.md"}], "reason": "Read it outside?", "proposedExecpolicyAmendment": ["cat", "README.md"]});
    let ask = Ask::from_request("item/commandExecution/requestApproval", &params, &decoder()).unwrap();
    assert_eq!(
        json_of(&ask),
        json!({"toolCallId": "t1/call_7", "kind": "read", "title": "cat README.md", "name": "exec_command",
            "content": [{"type": "content", "content": {"type": "text", "text": "Read it outside?"}}],
            "locations": [{"path": "/workspace/README.md"}],
            "rawInput": {"command": "/bin/bash -lc 'cat README.md'"}})
    );
    // No `availableDecisions` (an older server): Codex's own defaults, plus the session option.
    assert_eq!(
        ids(&ask),
        [
            "accept",
            "acceptForSession",
            "acceptWithExecpolicyAmendment",
            "decline"
        ]
    );
    assert_eq!(
        ask.answer("acceptWithExecpolicyAmendment"),
        json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["cat", "README.md"]}}})
    );
    assert_eq!(ask.cancelled(), json!({"decision": "cancel"}));
    assert!(ask.is_for_session("acceptForSession"));
    assert!(!ask.is_for_session("acceptWithExecpolicyAmendment"));
}

#[test]
fn network_amendments_allow_or_block_a_host() {
    let params = json!({"itemId": "c", "command": "curl https://example.com",
        "networkApprovalContext": {"host": "example.com", "protocol": "https"},
        "availableDecisions": ["accept", "acceptForSession",
            {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "example.com", "action": "allow"}}},
            {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "example.com", "action": "deny"}}},
            {"somethingNew": {}}, 42, "teleport"]});
    let ask = Ask::from_request("item/commandExecution/requestApproval", &params, &decoder()).unwrap();
    assert_eq!(
        ids(&ask),
        [
            "accept",
            "acceptForSession",
            "applyNetworkPolicyAmendment",
            "applyNetworkPolicyAmendment-2",
            "decline"
        ]
    );
    let names: Vec<&str> = ask.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names[2], "Always allow network access to example.com");
    assert_eq!(names[3], "Always block network access to example.com");
    assert_eq!(ask.options[3].kind, PermissionOptionKind::RejectAlways);
    assert_eq!(
        ask.answer("applyNetworkPolicyAmendment-2")["decision"]["applyNetworkPolicyAmendment"]["network_policy_amendment"]
            ["action"],
        "deny"
    );
    assert_eq!(
        json_of(&ask)["content"][0]["content"]["text"],
        "Network access to example.com"
    );
    // `cancel` was not offered: cancelling declines.
    assert_eq!(ask.cancelled(), json!({"decision": "decline"}));
}

#[test]
fn unknown_options_and_malformed_requests_reject() {
    let d = decoder();
    for params in [
        json!(null),
        json!({"itemId": 5, "availableDecisions": "all", "command": 7}),
    ] {
        let ask = Ask::from_request("item/commandExecution/requestApproval", &params, &d).unwrap();
        assert!(ids(&ask).contains(&"decline".to_owned()));
        assert_eq!(ask.answer("no-such-option"), json!({"decision": "decline"}));
        assert_eq!(ask.rejected(), json!({"decision": "decline"}));
        let ask = Ask::from_request("item/fileChange/requestApproval", &params, &d).unwrap();
        assert_eq!(json_of(&ask)["title"], "Edit files");
        assert_eq!(ask.answer("whatever"), json!({"decision": "decline"}));
        let ask = Ask::from_request("item/permissions/requestApproval", &params, &d).unwrap();
        assert_eq!(ask.rejected(), json!({"permissions": {}, "scope": "turn"}));
    }
}

#[test]
fn mcp_approvals_without_a_started_call_and_with_one_persistence() {
    let params = json!({"threadId": "t", "turnId": "u", "serverName": "docs", "mode": "form",
        "message": "Allow the docs MCP server to run tool \"search\"?", "requestedSchema": {"type": "object", "properties": {}},
        "_meta": {"codex_approval_kind": "mcp_tool_call", "persist": "always", "tool_name": "search",
            "tool_params": {"q": "acp"}}});
    let ask = Ask::from_request("mcpServer/elicitation/request", &params, &decoder()).unwrap();
    assert_eq!(ids(&ask), ["accept", "acceptAlways", "decline"]);
    assert_eq!(
        ask.answer("acceptAlways"),
        json!({"action": "accept", "content": {}, "_meta": {"persist": "always"}})
    );
    assert!(!ask.is_for_session("acceptAlways"));
    let call = json_of(&ask);
    assert_eq!(call["toolCallId"], "t1/mcp_approval_docs_search");
    assert_eq!(call["title"], "docs.search");
    assert_eq!(call["rawInput"], json!({"q": "acp"}));
    assert_eq!(ask.cancelled()["action"], "cancel");
}

#[test]
fn permission_requests_grant_what_was_asked_for_a_turn_or_the_session() {
    let params = json!({"threadId": "t", "turnId": "u", "itemId": "call_9", "cwd": "/workspace",
        "reason": "Needs the network and the build cache",
        "permissions": {"network": {"enabled": true}, "fileSystem": {"read": ["/cache"], "write": ["/out", "/tmp/x"]}}});
    let ask = Ask::from_request("item/permissions/requestApproval", &params, &decoder()).unwrap();
    assert_eq!(ids(&ask), ["turn", "session", "decline"]);
    let call = json_of(&ask);
    assert_eq!(
        call["title"],
        "Grant network access, write access to /out, /tmp/x, read access to /cache"
    );
    assert_eq!(call["toolCallId"], "t1/call_9");
    assert_eq!(
        ask.answer("session"),
        json!({"permissions": {"network": {"enabled": true},
            "fileSystem": {"read": ["/cache"], "write": ["/out", "/tmp/x"]}}, "scope": "session"})
    );
    assert_eq!(ask.answer("turn")["scope"], "turn");
    assert!(ask.is_for_session("session") && !ask.is_for_session("turn"));
    assert_eq!(ask.cancelled(), json!({"permissions": {}, "scope": "turn"}));
    let none = json!({"itemId": "c", "permissions": {"network": null, "fileSystem": null}});
    let ask = Ask::from_request("item/permissions/requestApproval", &none, &decoder()).unwrap();
    assert_eq!(json_of(&ask)["title"], "Grant more permissions");
    assert_eq!(ask.answer("turn"), json!({"permissions": {}, "scope": "turn"}));
}

#[test]
fn a_file_change_request_carries_the_started_diff_and_the_root() {
    let mut d = decoder();
    let mut out = Vec::new();
    d.notification(
        "item/started",
        &json!({"item": {"type": "fileChange", "id": "p1", "status": "inProgress", "changes": [
            {"path": "/workspace/new.txt", "kind": {"type": "add"}, "diff": "hi\n"}]}}),
        &mut out,
    );
    let params = json!({"itemId": "p1", "reason": "Write outside?", "grantRoot": "/srv"});
    let ask = Ask::from_request("item/fileChange/requestApproval", &params, &d).unwrap();
    let call = json_of(&ask);
    assert_eq!(call["toolCallId"], "t1/p1");
    assert_eq!(call["content"][0]["content"]["text"], "Write outside?");
    assert!(
        call["content"][1]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("/srv")
    );
    assert_eq!(
        call["content"][2],
        json!({"type": "diff", "path": "/workspace/new.txt", "newText": "hi\n"})
    );
    assert!(
        call.get("status").is_none(),
        "the ask leaves the call's status alone"
    );
}

#[test]
fn air_permission_titles_follow_the_request_and_carry_the_reason() {
    let permission = |method: &str, params: Value| {
        air_permission(method, &params).map(|m| m["jetbrains"]["air"]["permission"].clone())
    };
    assert_eq!(
        permission(
            methods::COMMAND_APPROVAL,
            json!({ "reason": "  needs the network  " })
        ),
        Some(json!({ "version": 1, "title": "Run command?", "description": "needs the network" }))
    );
    let network = json!({ "networkApprovalContext": { "host": "x", "protocol": "https" }, "reason": " " });
    assert_eq!(
        permission(methods::COMMAND_APPROVAL, network),
        Some(json!({ "version": 1, "title": "Allow network access?" }))
    );
    let edits = permission(methods::FILE_CHANGE_APPROVAL, json!({ "reason": 7 }));
    assert_eq!(edits, Some(json!({ "version": 1, "title": "Make edits?" })));
    let more = permission(methods::PERMISSIONS_APPROVAL, json!({}));
    assert_eq!(more, Some(json!({ "version": 1, "title": "Grant permissions?" })));
    assert_eq!(permission(methods::MCP_ELICITATION, json!({})), None);
}
