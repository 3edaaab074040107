//! The v2 face's request shapes against the v1 and v2 schema types (`requests.rs`).

use agent_client_protocol::v1::schema as v1;
use agent_client_protocol::v2::schema as v2;
use serde_json::json;

use super::*;

#[test]
fn initialize_goes_in_as_v1_and_comes_out_as_v2() {
    let asked = json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"},
        "capabilities": {"elicitation": {"form": {}}, "auth": {"terminal": {}}, "_meta": {"x": 1}}});
    let inner: v1::InitializeRequest = serde_json::from_value(initialize(&asked)).unwrap();
    assert!(inner.client_capabilities.auth.terminal);
    assert!(crate::capabilities::terminal_output(&inner.client_capabilities));
    assert!(crate::capabilities::compaction(&inner.client_capabilities));
    assert!(crate::capabilities::plan_updates(&inner.client_capabilities));
    assert!(inner.client_capabilities.elicitation.is_some());
    let answered = json!({"protocolVersion": 1,
        "agentCapabilities": {"loadSession": true,
            "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
            "mcpCapabilities": {"http": true, "sse": false},
            "sessionCapabilities": {"list": {}, "delete": {}, "fork": {}, "title": {}, "resume": {}},
            "auth": {"status": {}, "_meta": {"authStatus": {}}}, "providers": {}},
        "authMethods": [{"id": "api-key", "name": "Key"},
            {"type": "terminal", "id": "t", "name": "T", "args": ["login"]},
            {"type": "env_var", "id": "e", "name": "E", "vars": []}],
        "agentInfo": {"name": "acplb", "version": "0.1.0"}, "_meta": {"steering": {"supported": true},
            "jetbrains": {"air": {"version": 1, "capabilities": ["diffPatch", "sessionFailure", "asyncTasks"]}}}});
    let out = initialized(&answered);
    let typed: v2::InitializeResponse = serde_json::from_value(out.clone()).unwrap();
    assert_eq!(typed.auth_methods.len(), 2, "{out}");
    assert_eq!(
        out["capabilities"]["session"]["prompt"],
        json!({"image": {}, "embeddedContext": {}})
    );
    assert_eq!(out["capabilities"]["session"]["delete"], json!({}));
    assert_eq!(
        out["_meta"]["jetbrains"]["air"]["capabilities"],
        json!(["asyncTasks"]),
        "what v2 does not answer is not listed"
    );
    assert_eq!(
        out["authMethods"][0],
        json!({"type": "agent", "methodId": "api-key", "name": "Key"})
    );
}

#[test]
fn routes_name_the_v1_method() {
    assert_eq!(
        route("auth/login"),
        Route::Forward {
            method: "authenticate",
            shape: Shape::Same
        }
    );
    assert_eq!(route("session/prompt"), Route::Prompt);
    assert_eq!(route("session/load"), Route::Unknown, "v2 has no load");
    assert_eq!(route("session/set_mode"), Route::Unknown, "v2 has no modes");
}

#[test]
fn set_config_takes_v2s_typed_value() {
    let id = params(
        Shape::SetConfig,
        json!({"sessionId": "s", "configId": "mode", "type": "id", "value": "auto"}),
    );
    assert_eq!(
        id.unwrap(),
        json!({"sessionId": "s", "configId": "mode", "value": "auto"})
    );
    let flag = params(
        Shape::SetConfig,
        json!({"sessionId": "s", "configId": "f", "type": "boolean", "value": true}),
    );
    assert_eq!(flag.unwrap()["type"], "boolean");
    let wrong = params(
        Shape::SetConfig,
        json!({"sessionId": "s", "configId": "f", "type": "boolean", "value": "yes"}),
    );
    assert!(wrong.unwrap_err().contains("boolean"));
}

#[test]
fn a_setup_result_loses_its_modes() {
    let out = setup(
        json!({"sessionId": "s", "modes": {"currentModeId": "auto", "availableModes": []},
        "configOptions": [{"id": "mode", "name": "Mode", "type": "select", "currentValue": "auto",
            "options": [{"value": "auto", "name": "Auto"}]}]}),
    );
    let typed: v2::NewSessionResponse = serde_json::from_value(out.clone()).unwrap();
    assert_eq!(typed.config_options.len(), 1);
    assert!(out.get("modes").is_none());
}

#[test]
fn resume_replays_only_from_the_start() {
    assert_eq!(
        resume(json!({"sessionId": "s", "cwd": "/w"})).unwrap().0,
        "session/resume"
    );
    assert_eq!(
        resume(json!({"sessionId": "s", "cwd": "/w", "replayFrom": {"type": "start"}}))
            .unwrap()
            .0,
        "session/load"
    );
    assert!(resume(json!({"sessionId": "s", "replayFrom": {"type": "message", "messageId": "m"}})).is_err());
}

#[test]
fn an_air_client_on_v2_is_not_offered_airs_tool_call_shapes_but_keeps_async_tasks() {
    let asked = json!({"protocolVersion": 2, "info": {"name": "air", "version": "1"}, "capabilities": {"_meta": {
        "jetbrains": {"air": {"version": 1, "capabilities": ["diffPatch", "rawInputRendering", "goal", "asyncTasks"]}}}}});
    let inner = initialize(&asked);
    assert_eq!(
        inner["clientCapabilities"]["_meta"]["jetbrains"]["air"]["capabilities"],
        json!(["goal", "asyncTasks"])
    );
}

#[test]
fn a_v2_client_takes_subagent_sessions_in_acps_shape_even_an_air_one() {
    use crate::capabilities::{SubagentSessions, subagent_sessions};
    let plain = json!({"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": {}});
    let air = json!({"protocolVersion": 2, "info": {"name": "air", "version": "1"}, "capabilities": {"_meta": {
        "jetbrains": {"air": {"version": 1, "capabilities": ["nativeSubagentSessions", "goal"]}}}}});
    for asked in [plain, air] {
        let inner: v1::InitializeRequest = serde_json::from_value(initialize(&asked)).unwrap();
        assert_eq!(
            subagent_sessions(&inner.client_capabilities),
            Some(SubagentSessions::Acp),
            "{asked}"
        );
    }
}
