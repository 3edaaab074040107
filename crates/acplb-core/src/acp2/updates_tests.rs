//! Each v1 update's v2 form parsed as v2's `SessionUpdate` (`updates.rs`).

use agent_client_protocol::v2::schema::SessionUpdate;
use serde_json::{Value, json};

use super::*;

/// Every update parses as v2's `SessionUpdate`: the shapes are v2's, not merely renamed.
fn v2(update: Value, ids: &mut Ids) -> Vec<Value> {
    let out = to_v2(update, ids);
    for u in &out {
        if let Err(e) = serde_json::from_value::<SessionUpdate>(u.clone()) {
            panic!("not a v2 update: {e}: {u}");
        }
    }
    out
}

#[test]
fn chunks_without_an_id_are_one_message_until_something_else_comes() {
    let mut ids = Ids::default();
    let chunk =
        |t: &str| json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}});
    let a = v2(chunk("a"), &mut ids);
    let b = v2(chunk("b"), &mut ids);
    assert_eq!(a[0]["messageId"], b[0]["messageId"]);
    v2(
        json!({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x"}),
        &mut ids,
    );
    let c = v2(chunk("c"), &mut ids);
    assert_ne!(a[0]["messageId"], c[0]["messageId"]);
    let own = v2(
        json!({"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "d"}}),
        &mut ids,
    );
    assert_eq!(own[0]["messageId"], "m1");
}

#[test]
fn a_tool_call_is_an_upsert_and_its_terminal_comes_first() {
    let mut ids = Ids::default();
    let out = v2(
        json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "ls", "kind": "execute",
               "status": "in_progress", "rawInput": {"command": "ls"},
               "content": [{"type": "terminal", "terminalId": "c1"}],
               "_meta": {"terminal_info": {"terminal_id": "c1", "cwd": "/w"}}}),
        &mut ids,
    );
    let kinds: Vec<&str> = out.iter().map(|u| u["sessionUpdate"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["terminal_update", "tool_call_update"]);
    assert!(out[1].get("_meta").is_none());
    let done = v2(
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
               "_meta": {"terminal_output": {"terminal_id": "c1", "data": "a\n"},
                         "terminal_exit": {"terminal_id": "c1", "exit_code": 0, "signal": null}}}),
        &mut ids,
    );
    let kinds: Vec<&str> = done
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["tool_call_update", "terminal_output_chunk", "terminal_update"]
    );
}

#[test]
fn plans_commands_and_options_take_v2_shapes() {
    let mut ids = Ids::default();
    let plan = v2(
        json!({"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "medium", "status": "pending"}]}),
        &mut ids,
    );
    assert_eq!(plan[0]["plan"]["planId"], PLAN_ID);
    let commands = v2(
        json!({"sessionUpdate": "available_commands_update", "availableCommands": [
            {"name": "review", "description": "Review", "input": {"hint": "what"}},
            {"name": "status", "description": "Status"}]}),
        &mut ids,
    );
    assert_eq!(commands[0]["availableCommands"][0]["input"]["type"], "text");
    let options = v2(
        json!({"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "mode", "name": "Mode", "type": "select", "currentValue": "auto",
             "options": [{"value": "auto", "name": "Auto"}]},
            {"id": "model", "name": "Model", "type": "select", "currentValue": "m",
             "options": [{"group": "g", "name": "G", "options": [{"value": "m", "name": "M"}]}]}]}),
        &mut ids,
    );
    assert_eq!(options[0]["configOptions"][0]["configId"], "mode");
    assert_eq!(options[0]["configOptions"][1]["options"][0]["groupId"], "g");
}

#[test]
fn a_mode_update_has_no_v2_form() {
    let mut ids = Ids::default();
    assert!(
        to_v2(
            json!({"sessionUpdate": "current_mode_update", "currentModeId": "auto"}),
            &mut ids
        )
        .is_empty()
    );
    assert!(to_v2(json!("not an object"), &mut ids).is_empty());
}

#[test]
fn air_task_updates_keep_their_payload_under_an_underscored_kind() {
    let mut ids = Ids::default();
    let spawned = json!({"sessionUpdate": "async_task_spawned", "asyncTaskId": "t1", "name": "sleep 30",
        "taskType": "shell", "showInTranscript": false, "canStop": true, "toolCallId": "t1"});
    let out = to_v2(spawned.clone(), &mut ids);
    let mut expected = spawned;
    expected["sessionUpdate"] = json!("_async_task_spawned");
    assert_eq!(out, [expected]);
    let state = json!({"sessionUpdate": "async_task_state_update", "asyncTaskId": "t1", "state": "stopped", "toolCallId": "t1"});
    assert_eq!(
        to_v2(state, &mut ids)[0]["sessionUpdate"],
        "_async_task_state_update"
    );
}

#[test]
fn a_markdown_plan_update_is_v2s_own_and_passes_as_it_is() {
    let mut ids = Ids::default();
    let update = json!({"sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "t1-p1", "content": "# Plan\n1. a"}});
    assert_eq!(v2(update.clone(), &mut ids), [update]);
}
