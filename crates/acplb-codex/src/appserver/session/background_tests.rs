//! The task between turns: a parked subagent's news reaches its session, its error words
//! cleared of secrets as in a turn.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use acplb_core::capabilities::SubagentSessions;
use serde_json::json;
use tokio::sync::mpsc;

use super::*;
use crate::appserver::decode::DecoderOptions;
use crate::appserver::served::ServedSecrets;

#[tokio::test]
async fn a_parked_childs_error_words_between_turns_are_cleared_of_secrets() {
    tokio::task::LocalSet::new()
        .run_until(async {
            let (to_server, _sent) = mpsc::unbounded_channel();
            let rpc = Rpc::new(to_server, Duration::from_secs(60), ServedSecrets::default());
            let mut options = DecoderOptions::new("/repo");
            options.id_prefix = "t1-".into();
            let mut view =
                Subagents::new("parent", options).with_sessions("S1".into(), Some(SubagentSessions::Acp));
            let mut out = Vec::new();
            let spawn = json!({"threadId": "parent", "turnId": "p1", "item": {"type": "collabAgentToolCall",
                "id": "s", "tool": "spawnAgent", "status": "completed", "prompt": "nap",
                "receiverThreadIds": ["c"], "senderThreadId": "parent", "agentsStates": {}}});
            view.take("item/completed", &spawn, &mut out);
            view.take(
                "turn/started",
                &json!({"threadId": "c", "turn": {"id": "c1"}}),
                &mut out,
            );
            view.turn_ended(false, &mut out);
            assert!(view.parks());
            let parked: Parked = Rc::new(RefCell::new(Some(view)));
            let (idle, idle_rx) = mpsc::channel(8);
            let (updates, mut shown) = mpsc::unbounded_channel();
            let task = follow(Shared::default(), parked, Rc::downgrade(&rpc), idle_rx, updates);
            let failed = json!({"threadId": "c", "turn": {"id": "c1", "status": "failed",
                "error": {"message": "401: key sk-proj-abcdefghijklmnop1234 was refused"}}});
            let end = Incoming::Notification {
                method: "turn/completed".into(),
                params: failed,
            };
            assert!(idle.send(end).await.is_ok());
            let update = serde_json::to_string(&shown.recv().await.expect("the child's end")).unwrap();
            assert!(update.contains("was refused"), "{update}");
            assert!(!update.contains("sk-proj"), "{update}");
            task.abort();
        })
        .await;
}

#[tokio::test]
async fn a_request_left_in_the_inbox_at_the_turns_end_is_refused() {
    let (to_server, mut sent) = mpsc::unbounded_channel();
    let rpc = Rpc::new(to_server, Duration::from_secs(60), ServedSecrets::default());
    let mut inbox = rpc.subscribe("t1");
    rpc.set_active("t1", true);
    rpc.dispatch(r#"{"id":7,"method":"item/commandExecution/requestApproval","params":{"threadId":"t1","itemId":"i"}}"#);
    let mut decoder = AppDecoder::new(DecoderOptions::new("/repo"));
    let mut subagents = Subagents::new("t1", DecoderOptions::new("/repo"));
    let sink = acplb_core::provider::CollectingSink::default();
    take_rest(
        &Shared::default(),
        &mut decoder,
        &mut subagents,
        &mut inbox,
        &rpc,
        &sink,
    );
    let answer = sent.try_recv().expect("answered at once");
    let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["message"], "no turn of this session is running");
}
