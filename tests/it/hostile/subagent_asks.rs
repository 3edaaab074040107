//! What a subagent left working asks between its parent's turns (ADR 0059) when things go
//! wrong, with the real Codex and the mock model on app-server: the editor answers with an
//! error (a rejection: the command does not run, the child still ends); the child is cancelled
//! by the next turn while its question is open (the question is withdrawn, in the editor too,
//! and a late answer changes nothing); the session is closed while the question is open (no
//! Codex work is left, the editor is told to close the question, acplb serves on).

use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, NewSessionRequest, PromptRequest, StopReason,
};
use serde_json::json;

use crate::harness::{Answer, eventually, prompt};
use crate::subagent_asks::{asker_left, child_ended, the_child};
use crate::subagent_cancel::{cancel_and_see_cancelled, offers};
use crate::subagent_sessions::{states, text_of};
use crate::subagents::{live, on_exec};

/// The editor answers the child's question with an error: a rejection. The command does not
/// run, the child still ends, and the session's next prompt runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_for_a_question_between_turns_rejects_it_and_the_child_ends() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Error);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, next) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, parent, _, _) = asker_left(&cx, &ws, &permissions).await?;
            assert!(
                eventually(Duration::from_secs(60), || child_ended(&seen, &parent)).await,
                "the child never ended: {:?}",
                seen.all_with_sessions()
            );
            let next = prompt(&cx, &id, "scenario:plain again").await?.stop_reason;
            Ok((parent, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let child = the_child(&all, &parent);
    assert!(
        !text_of(&all, &child).contains("escalated-later"),
        "a refused command ran: {all:?}"
    );
    assert!(
        states(&all, &parent, &child)
            .iter()
            .any(|s| s["state"] == "requires_action")
    );
    assert!(!live.acplb.stderr().contains("panicked"));
}

/// The question is open when the next prompt's turn (`sleep 30`) takes the child up; the
/// editor cancels the child there: it ends `idle`/`cancelled`, its question is withdrawn (a
/// late answer then changes nothing), and the parent's own turn runs on to its cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_child_whose_question_is_open_withdraws_it() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, stop, late, after) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, parent, _, _) = asker_left(&cx, &ws, &permissions).await?;
            let child = the_child(&seen.all_with_sessions(), &parent);
            let before = seen.all_with_sessions().len();
            let turn = cx
                .send_request(PromptRequest::new(id.clone(), vec!["scenario:sleep go".into()]))
                .block_task();
            let canceller = async {
                // The next turn offers the child's cancel again once it took the child up.
                let offered = || {
                    let all = seen.all_with_sessions();
                    let now = offers(&all[before..], &parent, &child);
                    now.iter().any(|(_, caps)| caps.get("cancel").is_some())
                };
                assert!(
                    eventually(Duration::from_secs(30), offered).await,
                    "the next turn never offered the child's cancel: {:?}",
                    seen.all_with_sessions()
                );
                cancel_and_see_cancelled(&cx, &seen, &parent, &child).await;
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
            };
            let (resp, ()) = tokio::join!(turn, canceller);
            // The editor was told to close the question's dialog.
            let withdrawn = || permissions.held_withdrawn() == [true];
            assert!(
                eventually(Duration::from_secs(5), withdrawn).await,
                "{:?}",
                permissions.held_withdrawn()
            );
            let late = permissions.allow_held();
            let after = prompt(&cx, &id, "scenario:plain again").await?.stop_reason;
            Ok((parent, resp?.stop_reason, late, after))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert_eq!(late, 1, "the question was still open in the editor");
    assert_eq!(after, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let child = the_child(&all, &parent);
    assert_eq!(
        states(&all, &parent, &child).last(),
        Some(&json!({"state": "idle", "stopReason": "cancelled"})),
        "{all:?}"
    );
    assert!(
        !text_of(&all, &child).contains("escalated-later"),
        "the withdrawn command ran: {all:?}"
    );
    assert!(!live.acplb.stderr().contains("panicked"));
}

/// The editor closes the session while the child's question is open: the child stops with the
/// session, no Codex work is left, a late answer changes nothing, and acplb serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_session_with_a_question_open_leaves_no_codex_work() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (marker, acplb_pid) = (live.codex_marker(), live.acplb.pid);
    let (left, late, next) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, _, _, _) = asker_left(&cx, &ws, &permissions).await?;
            cx.send_request(CloseSessionRequest::new(id)).block_task().await?;
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(5)).await;
            let withdrawn = || permissions.held_withdrawn() == [true];
            assert!(
                eventually(Duration::from_secs(5), withdrawn).await,
                "the editor was not told to close the question: {:?}",
                permissions.held_withdrawn()
            );
            let late = permissions.allow_held();
            let other = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let next = prompt(&cx, &other.session_id, "scenario:plain hello")
                .await?
                .stop_reason;
            Ok((left, late, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(left.is_empty(), "Codex work left after the close: {left:?}");
    assert_eq!(late, 1);
    assert_eq!(next, StopReason::EndTurn);
    assert!(!live.acplb.stderr().contains("panicked"));
}
