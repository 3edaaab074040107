//! The task between turns: a parked subagent's news reaches its session, its error words
//! cleared of secrets as in a turn; what it asks goes to the editor, the answer to Codex; what
//! is not a parked child's question is refused.

use std::rc::Rc;
use std::time::Duration;

use acplb_core::capabilities::SubagentSessions;
use acplb_core::provider::PermissionAnswer;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::*;
use crate::appserver::decode::DecoderOptions;
use crate::appserver::served::ServedSecrets;
use crate::appserver::session::background::ParkedView;

/// A view of thread `parent`'s turn that ended leaving child `c` working, shown as session
/// `S1:subagent:c`.
pub(crate) fn parked_view() -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    let mut view = Subagents::new("parent", options).with_sessions("S1".into(), Some(SubagentSessions::Acp));
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
    view
}

/// A follower of `parked_view()` on a server whose lines go to the receiver returned; its
/// updates and its questions for the editor come out of the other two.
struct Running {
    idle: mpsc::Sender<Incoming>,
    shown: mpsc::UnboundedReceiver<SessionUpdate>,
    asked: mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>,
    to_codex: mpsc::UnboundedReceiver<String>,
    parked: Parked,
    _rpc: Rc<Rpc>,
    task: JoinHandle<()>,
}

fn start() -> Running {
    let (to_server, to_codex) = mpsc::unbounded_channel();
    let rpc = Rpc::new(to_server, Duration::from_secs(60), ServedSecrets::default());
    let parked: Parked = Rc::new(ParkedView::default());
    parked.keep(parked_view());
    let (idle, idle_rx) = mpsc::channel(8);
    let (updates, shown) = mpsc::unbounded_channel();
    let (editor, asked) = mpsc::unbounded_channel();
    let follower = Follower {
        background: Shared::default(),
        parked: parked.clone(),
        rpc: Rc::downgrade(&rpc),
        updates,
        editor,
    };
    Running {
        idle,
        shown,
        asked,
        to_codex,
        parked,
        _rpc: rpc,
        task: follow(follower, idle_rx),
    }
}

fn approval(id: u64, thread: &str) -> Incoming {
    Incoming::Request {
        id: id.into(),
        method: "item/commandExecution/requestApproval".into(),
        params: json!({"threadId": thread, "itemId": "i", "command": "echo hi"}),
    }
}

async fn local<F: std::future::Future<Output = ()>>(test: F) {
    tokio::task::LocalSet::new().run_until(test).await;
}

#[tokio::test]
async fn a_parked_childs_error_words_between_turns_are_cleared_of_secrets() {
    local(async {
        let mut run = start();
        let failed = json!({"threadId": "c", "turn": {"id": "c1", "status": "failed",
            "error": {"message": "401: key sk-proj-abcdefghijklmnop1234 was refused"}}});
        let end = Incoming::Notification {
            method: "turn/completed".into(),
            params: failed,
        };
        assert!(run.idle.send(end).await.is_ok());
        let update = serde_json::to_string(&run.shown.recv().await.expect("the child's end")).unwrap();
        assert!(update.contains("was refused"), "{update}");
        assert!(!update.contains("sk-proj"), "{update}");
        run.task.abort();
    })
    .await;
}

#[tokio::test]
async fn a_parked_childs_question_goes_to_the_editor_and_its_answer_to_codex() {
    local(async {
        let mut run = start();
        assert!(run.idle.send(approval(7, "c")).await.is_ok());
        let question = run.asked.recv().await.expect("put to the editor");
        assert_eq!(question.ask.session.as_deref(), Some("S1:subagent:c"));
        let waits = serde_json::to_string(&run.shown.recv().await.unwrap()).unwrap();
        assert!(waits.contains("requires_action"), "{waits}");
        assert!(run.to_codex.try_recv().is_err(), "Codex waits for the editor");
        let allow = question.ask.options[0].option_id.to_string();
        assert!(question.answer.send(PermissionAnswer::Selected(allow)).is_ok());
        let said: Value = serde_json::from_str(&run.to_codex.recv().await.unwrap()).unwrap();
        assert_eq!(said["id"], 7);
        assert_eq!(said["result"]["decision"], "accept", "{said}");
        let runs = serde_json::to_string(&run.shown.recv().await.unwrap()).unwrap();
        assert!(runs.contains("\"running\""), "{runs}");
        run.task.abort();
    })
    .await;
}

#[tokio::test]
async fn a_question_open_when_the_view_is_kept_again_is_still_answered() {
    local(async {
        let mut run = start();
        assert!(run.idle.send(approval(7, "c")).await.is_ok());
        let question = run.asked.recv().await.expect("put to the editor");
        // A turn takes the view up, and keeps it again at its end.
        let mut view = run.parked.borrow_mut().take().expect("parked");
        tokio::task::yield_now().await;
        // The turn waits on the question too (the last to wait on it is the one woken).
        let mut out = Vec::new();
        assert!(futures::FutureExt::now_or_never(view.answered(&mut out)).is_none());
        run.parked.keep(view);
        assert!(question.answer.send(PermissionAnswer::Cancelled).is_ok());
        // Bounded, so that a follower that never looks again fails rather than hangs.
        let said = tokio::time::timeout(Duration::from_secs(10), run.to_codex.recv()).await;
        let said: Value = serde_json::from_str(&said.expect("answered to Codex").unwrap()).unwrap();
        assert_eq!(said["id"], 7);
        assert_eq!(said["result"]["decision"], "cancel", "{said}");
        run.task.abort();
    })
    .await;
}

#[tokio::test]
async fn what_is_not_a_parked_childs_question_is_refused() {
    local(async {
        let mut run = start();
        // The parent's own request, a child's that is no approval, a thread nobody knows.
        let own = approval(1, "parent");
        let other = Incoming::Request {
            id: 2.into(),
            method: "item/tool/call".into(),
            params: json!({"threadId": "c"}),
        };
        for msg in [own, other, approval(3, "stranger")] {
            assert!(run.idle.send(msg).await.is_ok());
        }
        for id in 1..=3 {
            let said: Value = serde_json::from_str(&run.to_codex.recv().await.unwrap()).unwrap();
            assert_eq!(said["id"], id);
            assert_eq!(said["error"]["message"], "no turn of this session is running");
        }
        assert!(run.asked.try_recv().is_err());
        run.task.abort();
    })
    .await;
}

#[tokio::test]
async fn past_the_limit_a_question_is_refused_and_codex_gone_drops_them() {
    local(async {
        let mut run = start();
        for id in 0..=64 {
            assert!(run.idle.send(approval(id, "c")).await.is_ok());
        }
        let said: Value = serde_json::from_str(&run.to_codex.recv().await.unwrap()).unwrap();
        assert_eq!(said["id"], 64);
        assert_eq!(
            said["error"]["message"],
            "too many questions wait for the editor already"
        );
        let mut questions = Vec::new();
        while let Ok(q) = run.asked.try_recv() {
            questions.push(q);
        }
        assert_eq!(questions.len(), 64);
        let gone = Incoming::Gone(crate::appserver::rpc::Gone::closed());
        assert!(run.idle.send(gone).await.is_ok());
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        let left = run.parked.borrow_mut().as_mut().map(Subagents::withdraw_all);
        assert_eq!(
            left.map(|l| l.len()),
            Some(0),
            "Codex gone: nothing waits on the editor"
        );
        run.task.abort();
    })
    .await;
}
