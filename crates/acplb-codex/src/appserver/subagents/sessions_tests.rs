//! Unit tests of subagents shown as sessions of their own (ADR 0055): announced before their
//! traffic, their decoder's updates marked for them, their state following their turns.

use acplb_core::capabilities::SubagentSessions;
use acplb_core::provider::route;
use agent_client_protocol::v1::schema::SessionUpdate;
use serde_json::{Value, json};

use super::{DecoderOptions, Subagents};

const CHILD: &str = "S1:subagent:c";

/// A later turn's view, in `how`'s shape, of a session whose earlier turn announced child `c`.
fn knowing_c(how: SubagentSessions) -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t2-".into();
    Subagents::new("parent", options)
        .with_sessions("S1".into(), Some(how))
        .knowing(vec!["c".into()])
}

fn tracker() -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    Subagents::new("parent", options).with_sessions("S1".into(), Some(SubagentSessions::Acp))
}

fn spawn(child: &str, prompt: &str) -> Value {
    json!({"threadId": "parent", "turnId": "p1", "item": {"type": "collabAgentToolCall", "id": "call_1",
        "tool": "spawnAgent", "status": "completed", "prompt": prompt, "receiverThreadIds": [child],
        "senderThreadId": "parent", "agentsStates": {}}})
}

#[expect(clippy::needless_pass_by_value, reason = "callers pass `json!` literals")]
fn of_child(child: &str, extra: Value) -> Value {
    let mut params = json!({"threadId": child, "turnId": "c1"});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    params
}

/// Each update with the session it is for (`-` for the parent's), as JSON.
fn addressed(out: &[SessionUpdate]) -> Vec<(String, Value)> {
    out.iter()
        .map(|u| {
            let to = route::of(u).unwrap_or("-").to_owned();
            (to, serde_json::to_value(u).unwrap())
        })
        .collect()
}

#[expect(clippy::needless_pass_by_value, reason = "callers pass `json!` literals")]
fn run_child(s: &mut Subagents, out: &mut Vec<SessionUpdate>, end: Value) {
    assert!(s.take("item/completed", &spawn("c", "list the files"), out));
    assert!(s.take("turn/started", &of_child("c", json!({"turn": {"id": "c1"}})), out));
    let said = json!({"item": {"type": "agentMessage", "id": "m1", "text": "Found README.md"}});
    assert!(s.take(
        "item/started",
        &of_child(
            "c",
            json!({"item": {"type": "agentMessage", "id": "m1", "text": ""}})
        ),
        out
    ));
    assert!(s.take(
        "item/agentMessage/delta",
        &of_child("c", json!({"itemId": "m1", "delta": "Found README.md"})),
        out
    ));
    assert!(s.take("item/completed", &of_child("c", said), out));
    assert!(s.take("turn/completed", &of_child("c", json!({"turn": end})), out));
}

#[test]
fn a_child_is_announced_on_the_parent_then_its_own_words_go_to_its_session() {
    let mut s = tracker();
    let mut out = Vec::new();
    run_child(&mut s, &mut out, json!({"id": "c1", "status": "completed"}));
    let all = addressed(&out);
    // First the announcement, on the parent's session: title, task, nothing the editor may do.
    assert_eq!(all[0].0, "-");
    assert_eq!(
        all[0].1,
        json!({"sessionUpdate": "subagent_update", "sessionId": CHILD, "title": "list the files",
            "description": "list the files", "capabilities": {}})
    );
    assert_eq!(all[1].1["state"], json!({"state": "running"}));
    // The child's message is its session's, marked for it; no tool call shows it on the parent.
    let text: String = all
        .iter()
        .filter(|(to, u)| to == CHILD && u["sessionUpdate"] == "agent_message_chunk")
        .map(|(_, u)| u["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "Found README.md");
    assert!(
        all.iter()
            .all(|(to, u)| to == CHILD || u["sessionUpdate"] == "subagent_update"),
        "{all:?}"
    );
    assert_eq!(
        all.last().unwrap().1["state"],
        json!({"state": "idle", "stopReason": "end_turn"})
    );
}

#[test]
fn a_failed_or_interrupted_child_says_why_it_stopped() {
    let mut s = tracker();
    let mut out = Vec::new();
    let failed = json!({"id": "c1", "status": "failed", "error": {"message": "model broke"}});
    run_child(&mut s, &mut out, failed);
    assert_eq!(
        serde_json::to_value(out.last().unwrap()).unwrap()["state"],
        json!({"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "model broke"}})
    );
    let mut s = tracker();
    out.clear();
    run_child(&mut s, &mut out, json!({"id": "c1", "status": "interrupted"}));
    assert_eq!(
        serde_json::to_value(out.last().unwrap()).unwrap()["state"],
        json!({"state": "idle", "stopReason": "cancelled"})
    );
}

#[test]
fn a_child_still_working_when_the_turn_ends_runs_on_and_a_cancel_ends_it_cancelled() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    out.clear();
    s.turn_ended(false, &mut out);
    // Shown between turns (`parked.rs`): running, with no cancel to offer.
    assert_eq!(
        serde_json::to_value(&out[0]).unwrap(),
        json!({"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": "running"},
            "capabilities": {}})
    );
    assert!(s.parks());
    let mut s = tracker();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    out.clear();
    s.turn_ended(true, &mut out);
    assert_eq!(
        serde_json::to_value(&out[0]).unwrap()["state"],
        json!({"state": "idle", "stopReason": "cancelled"})
    );
    // Codex gone: nobody knows.
    let mut s = tracker();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    out.clear();
    s.close_open("Codex exited before this finished.", &mut out);
    assert_eq!(
        serde_json::to_value(&out[0]).unwrap()["state"],
        json!({"state": "unknown"})
    );
}

#[test]
fn a_childs_approval_is_asked_in_its_own_session_untitled_by_the_parent() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "escalate"), &mut out);
    let item = json!({"item": {"type": "commandExecution", "id": "i1", "command": "echo hi", "status": "inProgress"}});
    s.take("item/started", &of_child("c", item), &mut out);
    let request = of_child(
        "c",
        json!({"itemId": "i1", "command": "echo hi", "reason": "needs it"}),
    );
    assert_eq!(s.session_of(&request).as_deref(), Some(CHILD));
    let ask = s
        .ask("item/commandExecution/requestApproval", &request)
        .expect("an ask");
    let title = ask.tool_call.fields.title.unwrap_or_default();
    assert!(!title.starts_with("Subagent"), "{title}");
    // The parent's own requests are the parent's.
    assert_eq!(s.session_of(&json!({"threadId": "parent"})), None);
}

#[test]
fn without_sessions_the_child_stays_a_tool_call() {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    let mut s = Subagents::new("parent", options).with_sessions("S1".into(), None);
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "list"), &mut out);
    assert_eq!(
        serde_json::to_value(&out[0]).unwrap()["sessionUpdate"],
        "tool_call"
    );
    assert!(out.iter().all(|u| route::of(u).is_none()));
}

#[test]
fn a_child_an_earlier_turn_announced_goes_on_without_a_new_announcement() {
    let mut s = knowing_c(SubagentSessions::Acp);
    let mut out = Vec::new();
    assert!(s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c2"}})),
        &mut out
    ));
    let all = addressed(&out);
    assert!(
        all.iter().all(|(_, u)| u.get("title").is_none()),
        "not announced again: {all:?}"
    );
    assert_eq!(all[0].1["state"], json!({"state": "running"}));
    assert_eq!(s.announced(), ["c"]);
}

#[test]
fn a_known_child_a_later_turn_only_names_stays_idle_and_gets_no_false_end() {
    let mut s = knowing_c(SubagentSessions::Air);
    let mut out = Vec::new();
    let wait = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "id": "w", "tool": "closeAgent",
        "status": "completed", "receiverThreadIds": ["c"], "agentsStates": {"c": {"status": "shutdown"}}}});
    s.take("item/completed", &wait, &mut out);
    let queued = json!({"threadId": "parent", "item": {"type": "subAgentActivity", "id": "a", "kind": "interacted",
        "agentThreadId": "c", "agentPath": "/root/c"}});
    s.take("item/completed", &queued, &mut out);
    assert!(!s.working(), "named and sent a message, not running: no wait");
    s.turn_ended(false, &mut out);
    assert!(out.is_empty(), "no announcement, no end: {:?}", addressed(&out));
    // Spawned anew, it works again.
    s.take("item/completed", &spawn("c", "again"), &mut out);
    assert!(s.working());
}

#[test]
fn a_child_a_wait_only_names_is_not_waited_for_and_a_spawned_one_is() {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    let mut s = Subagents::new("parent", options).with_sessions("S1".into(), Some(SubagentSessions::Air));
    assert!(s.waits());
    let mut out = Vec::new();
    let wait = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "id": "w", "tool": "wait",
        "status": "completed", "receiverThreadIds": ["old"], "agentsStates": {"old": {"status": "running"}}}});
    s.take("item/completed", &wait, &mut out);
    assert!(!s.working(), "a wait gives no work");
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    assert!(s.working(), "spawned, not yet running: it will");
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    assert!(s.working());
    s.take(
        "turn/completed",
        &of_child("c", json!({"turn": {"id": "c1", "status": "completed"}})),
        &mut out,
    );
    assert!(!s.working());
    // Codex's other ends of a child, in a collaboration item's states.
    out.clear();
    s.take("item/completed", &spawn("d", "x"), &mut out);
    let states = json!({"threadId": "parent", "item": {"type": "collabAgentToolCall", "id": "w2", "tool": "wait",
        "status": "completed", "receiverThreadIds": ["d"], "agentsStates": {"d": {"status": "interrupted"}}}});
    s.take("item/completed", &states, &mut out);
    assert!(!s.working());
    let last = serde_json::to_value(out.last().unwrap()).unwrap();
    assert_eq!(last["state"], json!({"state": "idle", "stopReason": "cancelled"}));
}

#[test]
fn a_child_waiting_on_the_editor_says_so_until_nothing_it_asked_is_open() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "ask"), &mut out);
    out.clear();
    s.editor_asks("c", true, &mut out);
    s.editor_asks("c", true, &mut out);
    s.editor_asks("c", false, &mut out);
    assert_eq!(out.len(), 1, "one ask still open: {:?}", addressed(&out));
    s.editor_asks("c", false, &mut out);
    let states: Vec<Value> = addressed(&out)
        .into_iter()
        .map(|(_, u)| u["state"].clone())
        .collect();
    assert_eq!(
        states,
        [json!({"state": "requires_action"}), json!({"state": "running"})]
    );
    // A child that ended says nothing more; an unknown one is ignored.
    s.turn_ended(true, &mut out);
    out.clear();
    s.editor_asks("c", true, &mut out);
    s.editor_asks("nobody", true, &mut out);
    assert!(out.is_empty());
}

/// The `capabilities` of each state update for the child, in order.
fn cancel_offers(out: &[SessionUpdate]) -> Vec<(String, Value)> {
    addressed(out)
        .into_iter()
        .filter(|(_, u)| u["sessionUpdate"] == "subagent_update" && u.get("state").is_some())
        .map(|(_, u)| {
            (
                u["state"]["state"].as_str().unwrap().to_owned(),
                u["capabilities"].clone(),
            )
        })
        .collect()
}

#[test]
fn the_editor_may_cancel_a_childs_work_only_while_a_turn_of_its_runs() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    assert_eq!(s.cancellable(CHILD), None, "spawned, no turn yet");
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    assert_eq!(s.cancellable(CHILD), Some(("c".to_owned(), "c1".to_owned())));
    assert_eq!(s.cancellable("S1:subagent:other"), None, "no such child");
    // A permission ask leaves the offer as it was (no capabilities said), its answer says it again.
    s.editor_asks("c", true, &mut out);
    s.editor_asks("c", false, &mut out);
    s.take(
        "turn/completed",
        &of_child("c", json!({"turn": {"id": "c1", "status": "interrupted"}})),
        &mut out,
    );
    assert_eq!(s.cancellable(CHILD), None, "its turn ended");
    assert_eq!(
        cancel_offers(&out),
        vec![
            ("running".to_owned(), json!({"cancel": {}})),
            ("requires_action".to_owned(), Value::Null),
            ("running".to_owned(), json!({"cancel": {}})),
            ("idle".to_owned(), json!({})),
        ]
    );
}

#[test]
fn a_child_shown_as_a_tool_call_has_nothing_to_cancel() {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    let mut s = Subagents::new("parent", options);
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    assert_eq!(s.cancellable(CHILD), None);
}

#[test]
fn a_parked_child_goes_on_between_turns_and_the_next_turn_takes_it_up() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    s.take("item/completed", &spawn("d", "quick"), &mut out);
    s.take(
        "turn/started",
        &of_child("d", json!({"turn": {"id": "d1"}})),
        &mut out,
    );
    let done = json!({"turn": {"id": "d1", "status": "completed"}});
    s.take("turn/completed", &of_child("d", done), &mut out);
    s.turn_ended(false, &mut out);
    assert_eq!(s.cancellable(CHILD), None, "nothing to cancel between turns");
    // Between turns its news is still its own.
    out.clear();
    let said = json!({"item": {"type": "agentMessage", "id": "m9", "text": "Napped."}});
    assert!(s.take("item/completed", &of_child("c", said), &mut out));
    assert!(addressed(&out).iter().all(|(to, _)| to == CHILD), "{out:?}");
    // The next turn: the ended child is remembered only, the working one offered for cancel.
    out.clear();
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t2-".into();
    s.next_turn(options, &mut out);
    assert_eq!(
        cancel_offers(&out),
        vec![("running".to_owned(), json!({"cancel": {}}))]
    );
    assert_eq!(s.cancellable(CHILD), Some(("c".to_owned(), "c1".to_owned())));
    assert_eq!(s.threads(), vec![("c".to_owned(), Some("c1".to_owned()))]);
    assert_eq!(s.announced(), ["d", "c"]);
}

#[test]
fn children_shown_as_tool_calls_or_to_air_are_not_parked() {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    for s in [
        Subagents::new("parent", options.clone()),
        Subagents::new("parent", options.clone()).with_sessions("S1".into(), Some(SubagentSessions::Air)),
    ] {
        let mut s = s;
        let mut out = Vec::new();
        s.take("item/completed", &spawn("c", "nap"), &mut out);
        s.take(
            "turn/started",
            &of_child("c", json!({"turn": {"id": "c1"}})),
            &mut out,
        );
        s.turn_ended(false, &mut out);
        assert!(!s.parks());
    }
}

#[test]
fn a_child_first_seen_between_turns_offers_no_cancel_until_a_turn_takes_it_up() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    s.turn_ended(false, &mut out);
    // Between turns a child not seen before starts a turn (the parked one spawned it).
    out.clear();
    let grandchild = json!({"threadId": "g", "turnId": "g1", "turn": {"id": "g1"}});
    assert!(s.take("turn/started", &grandchild, &mut out));
    assert_eq!(s.cancellable("S1:subagent:g"), None);
    let offered: Vec<Value> = cancel_offers(&out).into_iter().map(|(_, c)| c).collect();
    assert!(offered.iter().all(|c| c.get("cancel").is_none()), "{offered:?}");
    // The next turn takes both up and offers both.
    out.clear();
    s.next_turn(DecoderOptions::new("/repo"), &mut out);
    assert_eq!(
        s.cancellable("S1:subagent:g"),
        Some(("g".to_owned(), "g1".to_owned()))
    );
    assert_eq!(cancel_offers(&out).len(), 2);
}

#[test]
fn what_a_child_asked_in_a_turn_counts_no_more_once_it_is_parked() {
    let mut s = tracker();
    let mut out = Vec::new();
    s.take("item/completed", &spawn("c", "nap"), &mut out);
    s.take(
        "turn/started",
        &of_child("c", json!({"turn": {"id": "c1"}})),
        &mut out,
    );
    s.editor_asks("c", true, &mut out);
    // The turn ends with the ask open: it is answered "cancel" then.
    s.turn_ended(false, &mut out);
    s.next_turn(DecoderOptions::new("/repo"), &mut out);
    out.clear();
    s.editor_asks("c", true, &mut out);
    assert_eq!(
        cancel_offers(&out),
        vec![("requires_action".to_owned(), Value::Null)]
    );
}
