//! Unit tests of the subagent view: children titled, their lines, approvals and ends as tool-call updates.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use serde_json::{Value, json};

use super::*;

fn tracker() -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    Subagents::new("parent", options)
}

fn json_of(out: &[SessionUpdate]) -> Vec<Value> {
    out.iter().map(|u| serde_json::to_value(u).unwrap()).collect()
}

fn started(child: &str, path: &str) -> Value {
    json!({"threadId": "parent", "turnId": "p1", "item": {"type": "subAgentActivity", "id": "call_1",
        "kind": "started", "agentThreadId": child, "agentPath": path}})
}

fn of_child(child: &str, extra: Value) -> Value {
    let mut params = json!({"threadId": child, "turnId": "c1"});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    params
}

#[test]
fn a_spawned_child_is_a_tool_call_titled_by_its_task_with_its_activity_and_result() {
    let mut s = tracker();
    let mut out = Vec::new();
    assert!(s.take("item/started", &started("c", "/root/lister"), &mut out));
    assert!(s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out
    ));
    let ls = json!({"item": {"type": "commandExecution", "id": "i1", "command": "ls", "exitCode": 0, "status": "completed"}});
    assert!(s.take("item/completed", &of_child("c", ls), &mut out));
    let said = json!({"item": {"type": "agentMessage", "id": "m1", "text": "Found README.md"}});
    assert!(s.take("item/completed", &of_child("c", said), &mut out));
    assert_eq!(s.threads(), [("c".to_owned(), Some("c1".to_owned()))]);
    assert!(s.take(
        "turn/completed",
        &of_child("c", json!({"turn": {"id": "c1", "status": "completed"}})),
        &mut out
    ));
    let updates = json_of(&out);
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[0]["title"], "Subagent: lister");
    assert_eq!(updates[0]["kind"], "think");
    assert_eq!(updates[0]["toolCallId"], "t1-agent-c");
    let last = updates.last().unwrap();
    assert_eq!(last["status"], "completed");
    assert_eq!(
        last["content"][0]["content"]["text"],
        "- ran `ls`\n- Found README.md"
    );
    assert_eq!(last["rawOutput"]["result"], "Found README.md");
    // The parent's own messages are not taken.
    assert!(!s.take(
        "item/started",
        &json!({"threadId": "parent", "item": {"type": "agentMessage"}}),
        &mut out
    ));
}

#[test]
fn a_failed_child_ends_failed_with_why_and_open_children_close_at_the_turn_end() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/started", &started("a", "/root/a"), &mut out);
    s.take("item/started", &started("b", "/root/b"), &mut out);
    let failed = json!({"turn": {"id": "c1", "status": "failed", "error": {"message": "model broke"}}});
    s.take("turn/completed", &of_child("a", failed), &mut out);
    out.clear();
    s.turn_ended(false, &mut out);
    let updates = json_of(&out);
    assert_eq!(updates.len(), 1, "only the open child closes: {updates:?}");
    assert_eq!(updates[0]["toolCallId"], "t1-agent-b");
    assert_eq!(updates[0]["status"], "completed");
    let a = s.children.iter().find(|c| c.thread_id == "a").unwrap();
    assert_eq!(a.status, ToolCallStatus::Failed);
    assert_eq!(a.lines, ["Failed: model broke"]);
}

#[test]
fn odd_and_unknown_messages_are_harmless() {
    let mut s = tracker();
    let mut out = Vec::new();
    // A collaboration call with missing and unknown fields names nobody and fails nothing.
    let odd = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "tool": "teleport",
        "receiverThreadIds": "nope", "agentsStates": {"ghost": {"status": "completed"}}, "extra": 1}});
    assert!(s.take("item/completed", &odd, &mut out));
    assert!(out.is_empty());
    // A message of a thread never spawned here (routed by mistake) shows as an unnamed child.
    assert!(s.take(
        "item/completed",
        &json!({"threadId": "x", "item": {"type": "agentMessage", "text": "hi"}}),
        &mut out
    ));
    assert_eq!(json_of(&out)[0]["title"], "Subagent");
    // v1: the spawn call's prompt titles the child, its states end it.
    let spawn = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "tool": "spawnAgent",
        "status": "completed", "receiverThreadIds": ["v1"], "prompt": "Count\nthe files",
        "agentsStates": {"v1": {"status": "running", "message": null}}}});
    s.take("item/completed", &spawn, &mut out);
    let waited = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "tool": "wait",
        "receiverThreadIds": ["v1"], "agentsStates": {"v1": {"status": "errored", "message": "boom"}}}});
    out.clear();
    s.take("item/completed", &waited, &mut out);
    let updates = json_of(&out);
    assert_eq!(updates.last().unwrap()["status"], "failed");
    let v1 = s.children.iter().find(|c| c.thread_id == "v1").unwrap();
    assert_eq!(v1.task.as_deref(), Some("Count the files"));
}

#[test]
fn many_children_are_bounded_and_lines_too() {
    let mut s = tracker();
    let mut out = Vec::new();
    for i in 0..SHOWN_LIMIT + 5 {
        s.take("item/started", &started(&format!("c{i}"), "/root/x"), &mut out);
    }
    assert_eq!(s.children.len(), SHOWN_LIMIT);
    assert!(s.take(
        "item/completed",
        &json!({"threadId": "c70", "item": {"type": "agentMessage", "text": "x"}}),
        &mut out
    ));
    for i in 0..LINES_KEPT + 3 {
        let said = json!({"item": {"type": "agentMessage", "text": format!("line {i}")}});
        s.take("item/completed", &of_child("c0", said), &mut out);
    }
    let c0 = &s.children[0];
    assert_eq!(c0.lines.len(), LINES_KEPT);
    assert_eq!(c0.dropped, 3);
    let last = json_of(&out).pop().unwrap();
    let text = last["content"][0]["content"]["text"].as_str().unwrap().to_owned();
    assert!(text.starts_with("… 3 earlier lines\n- line 3"), "{text}");
}

#[test]
fn a_childs_approval_is_read_with_its_items_and_its_call_ends_with_the_item() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/started", &started("c", "/root/e"), &mut out);
    let cmd = json!({"item": {"type": "commandExecution", "id": "i9", "command": "echo hi", "cwd": "/repo",
        "status": "inProgress", "commandActions": []}});
    s.take("item/started", &of_child("c", cmd), &mut out);
    let request =
        json!({"threadId": "c", "turnId": "c1", "itemId": "i9", "command": "echo hi", "cwd": "/repo"});
    assert!(s.is_child(&request));
    let ask = s
        .ask("item/commandExecution/requestApproval", &request)
        .expect("an ask");
    assert!(
        ask.tool_call.tool_call_id.to_string().starts_with("t1-a0-"),
        "{:?}",
        ask.tool_call.tool_call_id
    );
    assert!(
        s.ask(
            "item/commandExecution/requestApproval",
            &json!({"threadId": "parent"})
        )
        .is_none()
    );
    out.clear();
    let done = json!({"item": {"type": "commandExecution", "id": "i9", "command": "echo hi", "exitCode": 0, "status": "completed"}});
    s.take("item/completed", &of_child("c", done), &mut out);
    let updates = json_of(&out);
    assert_eq!(updates[0]["toolCallId"], ask.tool_call.tool_call_id.to_string());
    assert_eq!(updates[0]["status"], "completed");
}
