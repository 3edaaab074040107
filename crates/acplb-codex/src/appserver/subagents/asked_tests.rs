//! What children ask between turns (`asked.rs`): kept with the view through its next turn
//! (which says again that the child waits), withdrawn one child at a time, counted when the
//! view is parked again.

use acplb_core::capabilities::SubagentSessions;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{DecoderOptions, Subagents};

/// A parked view of a turn on `parent` that left children `c` and `d` working, as sessions.
fn parked() -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    let mut s = Subagents::new("parent", options).with_sessions("S1".into(), Some(SubagentSessions::Acp));
    let mut out = Vec::new();
    for child in ["c", "d"] {
        let spawn = json!({"threadId": "parent", "turnId": "p1", "item": {"type": "collabAgentToolCall",
            "id": format!("s-{child}"), "tool": "spawnAgent", "status": "completed", "prompt": "work",
            "receiverThreadIds": [child], "senderThreadId": "parent", "agentsStates": {}}});
        s.take("item/completed", &spawn, &mut out);
        s.take(
            "turn/started",
            &json!({"threadId": child, "turn": {"id": "t"}}),
            &mut out,
        );
    }
    s.turn_ended(false, &mut out);
    assert!(s.parks());
    s
}

fn approval(child: &str) -> Value {
    json!({"threadId": child, "itemId": "i", "command": "echo hi"})
}

/// The states shown, as JSON.
fn states(out: &[agent_client_protocol::v1::schema::SessionUpdate]) -> Vec<(Value, Value)> {
    out.iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .filter(|u| u.get("state").is_some())
        .map(|u| (u["sessionId"].clone(), u["state"]["state"].clone()))
        .collect()
}

const METHOD: &str = "item/commandExecution/requestApproval";

#[test]
fn a_question_stays_open_through_the_next_turn_and_is_said_again_there() {
    let mut s = parked();
    let (editor, _asked) = mpsc::unbounded_channel();
    let mut out = Vec::new();
    assert!(
        s.ask_between(&json!(7), METHOD, &approval("c"), &editor, &mut out)
            .is_ok()
    );
    assert_eq!(states(&out), [(json!("S1:subagent:c"), json!("requires_action"))]);
    out.clear();
    s.next_turn(DecoderOptions::new("/repo"), &mut out);
    let shown = states(&out);
    let c = json!("S1:subagent:c");
    assert_eq!(
        shown
            .iter()
            .filter(|(id, _)| *id == c)
            .map(|(_, s)| s.clone())
            .collect::<Vec<_>>(),
        [json!("running"), json!("requires_action")],
        "{shown:?}"
    );
    assert!(
        !shown
            .iter()
            .any(|(id, s)| *id == json!("S1:subagent:d") && *s == "requires_action"),
        "{shown:?}"
    );
    // Parked again at that turn's end, the question still counts: one answer shows it running.
    s.park(&mut out);
    out.clear();
    let withdrawn = s.withdraw_asks("c", &mut out);
    assert_eq!(withdrawn.len(), 1);
    assert_eq!(withdrawn[0].id, json!(7));
    assert_eq!(states(&out), [(c, json!("running"))]);
}

#[test]
fn withdrawing_one_childs_questions_leaves_the_others() {
    let mut s = parked();
    let (editor, mut asked) = mpsc::unbounded_channel();
    let mut out = Vec::new();
    for (id, child) in [(1, "c"), (2, "d"), (3, "c")] {
        assert!(
            s.ask_between(&json!(id), METHOD, &approval(child), &editor, &mut out)
                .is_ok()
        );
    }
    let mut sessions = Vec::new();
    while let Ok(q) = asked.try_recv() {
        sessions.push(q.ask.session.unwrap());
    }
    assert_eq!(sessions, ["S1:subagent:c", "S1:subagent:d", "S1:subagent:c"]);
    out.clear();
    let ids: Vec<Value> = s.withdraw_asks("c", &mut out).into_iter().map(|o| o.id).collect();
    assert_eq!(ids, [json!(1), json!(3)]);
    // `c` waits no more (said once its last question went); `d` still does.
    assert_eq!(states(&out), [(json!("S1:subagent:c"), json!("running"))]);
    let rest: Vec<Value> = s.withdraw_all().into_iter().map(|o| o.id).collect();
    assert_eq!(rest, [json!(2)]);
}

#[test]
fn a_question_with_nobody_to_ask_or_of_no_child_is_not_asked() {
    let mut s = parked();
    let mut out = Vec::new();
    let (editor, asked) = mpsc::unbounded_channel();
    drop(asked);
    assert_eq!(
        s.ask_between(&json!(1), METHOD, &approval("c"), &editor, &mut out),
        Err(super::NotAsked::NoEditor)
    );
    let (editor, _asked) = mpsc::unbounded_channel();
    for (params, method) in [(approval("parent"), METHOD), (approval("c"), "item/tool/call")] {
        assert_eq!(
            s.ask_between(&json!(2), method, &params, &editor, &mut out),
            Err(super::NotAsked::NotOurs)
        );
    }
    assert!(out.is_empty(), "nobody was shown waiting: {out:?}");
}

#[test]
fn a_question_codex_settled_itself_is_open_no_more() {
    let mut s = parked();
    let (editor, mut asked) = mpsc::unbounded_channel();
    let mut out = Vec::new();
    assert!(
        s.ask_between(&json!(7), METHOD, &approval("c"), &editor, &mut out)
            .is_ok()
    );
    let question = asked.try_recv().unwrap();
    out.clear();
    // Another request of the child's settled: nothing changes.
    let other = json!({"threadId": "c", "requestId": 8});
    assert!(s.take("serverRequest/resolved", &other, &mut out));
    assert!(out.is_empty(), "{out:?}");
    let settled = json!({"threadId": "c", "requestId": 7});
    assert!(s.take("serverRequest/resolved", &settled, &mut out));
    assert_eq!(states(&out), [(json!("S1:subagent:c"), json!("running"))]);
    assert!(s.withdraw_all().is_empty(), "open no more");
    assert!(
        question.answer.is_closed(),
        "the editor's late answer goes nowhere"
    );
}
