//! Cancels of one subagent's work (ADR 0056) that go wrong, with the real Codex and the mock
//! model: a cancel of a child that waits on the editor's answer stops the child and ends its
//! question's call, though the editor never answers (Codex settles what an interrupted turn
//! asked), and its next ask shows as one; cancels with nothing
//! to cancel (a child whose work ended, a child that never was, an id whose parent is unknown
//! or that names no thread) change nothing and the session goes on, on both transports.

use std::time::Duration;

use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, SessionId, StopReason};
use serde_json::json;

use crate::harness::{Answer, eventually, open_session_as, prompt};
use crate::subagent_cancel::{cancel_and_see_cancelled, offers};
use crate::subagent_sessions::{announced, text_of};
use crate::subagents::{live, on_exec};

/// `scenario:subagent_escalate` (a child asking to run outside the sandbox), the editor never
/// answering: a cancel of the child while its question is open ends the question's call in the
/// child's session and the child `idle`/`cancelled`; the parent goes on until its own cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_child_that_waits_on_the_editor_withdraws_its_question() {
    if on_exec() {
        // exec never asks (approval policy `never`).
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (stop, parent, child) = live
        .acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            crate::live::set_mode(&cx, &id, "read-only").await?;
            let parent = id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(
                    id.clone(),
                    vec!["scenario:subagent_escalate go".into()],
                ))
                .block_task();
            let canceller = async {
                let asked = || !permissions.seen().is_empty();
                assert!(
                    eventually(Duration::from_secs(60), asked).await,
                    "the child never asked"
                );
                let child = permissions.seen()[0]["sessionId"].as_str().unwrap().to_owned();
                cancel_and_see_cancelled(&cx, &seen, &parent, &child).await;
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
                child
            };
            let (resp, child) = tokio::join!(turn, canceller);
            Ok((resp?.stop_reason, parent, child))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    let all = live.updates.all_with_sessions();
    let asked = &live.acplb.permissions.seen()[0]["toolCall"]["toolCallId"];
    let ended = all
        .iter()
        .any(|(s, u)| *s == child && u["toolCallId"] == *asked && u["status"] == "failed");
    assert!(
        ended,
        "the question's call did not end in the child's session: {all:?}"
    );
    let states: Vec<_> = offers(&all, &parent, &child)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let asked_at = states.iter().position(|s| s["state"] == "requires_action");
    assert!(asked_at.is_some(), "{states:?}");
    assert_eq!(
        states.last().unwrap(),
        &json!({"state": "idle", "stopReason": "cancelled"}),
        "{states:?}"
    );
}

/// After `scenario:subagent` (its child done), cancels that have nothing to cancel: the ended
/// child, a child the parent never had, ids whose parent is unknown or that name no thread.
/// None answers or changes anything, and the session's next prompt runs as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancels_with_nothing_to_cancel_change_nothing() {
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (first, next, parent) = live
        .acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            let parent = id.to_string();
            let first = prompt(&cx, &id, "scenario:subagent go").await?.stop_reason;
            let mut ids: Vec<String> = announced(&seen.all_with_sessions(), &parent)
                .iter()
                .filter_map(|c| c["sessionId"].as_str().map(str::to_owned))
                .collect();
            ids.extend([
                format!("{parent}:subagent:01a2-never-spawned"),
                "not-a-session:subagent:01a2".to_owned(),
                format!("{parent}:subagent:"),
                ":subagent:01a2".to_owned(),
            ]);
            for id in ids {
                cx.send_notification(CancelNotification::new(SessionId::new(id.as_str())))
                    .unwrap();
            }
            let next = prompt(&cx, &id, "scenario:plain again").await?.stop_reason;
            Ok((first, next, parent))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, StopReason::EndTurn);
    assert_eq!(next, StopReason::EndTurn, "the session went on");
    let all = live.updates.all_with_sessions();
    assert!(
        text_of(&all, &parent).contains("Hello! I am the mock model."),
        "the next prompt was answered: {all:?}"
    );
    let stderr = live.acplb.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    if !on_exec() {
        let child = announced(&all, &parent)[0]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned();
        let (last, _) = offers(&all, &parent, &child).pop().unwrap();
        assert_eq!(
            last,
            json!({"state": "idle", "stopReason": "end_turn"}),
            "{all:?}"
        );
    }
}

/// `scenario:subagent_ask_again`: the child asks for an escalation, the editor does not answer,
/// the editor cancels the child; the parent then gives it the same task again. The first ask
/// no longer counts (its wait ended with the cancel), so the second shows the child
/// `requires_action` again, and its answer lets the child finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_cancelled_while_asking_shows_its_next_ask_as_one() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (stop, parent, child) = live
        .acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            let parent = id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(
                    id.clone(),
                    vec!["scenario:subagent_ask_again go".into()],
                ))
                .block_task();
            let canceller = async {
                let asked = || !permissions.seen().is_empty();
                assert!(
                    eventually(Duration::from_secs(60), asked).await,
                    "the child never asked"
                );
                let child = permissions.seen()[0]["sessionId"].as_str().unwrap().to_owned();
                // The next ask is answered.
                permissions.answer(Answer::First);
                cx.send_notification(CancelNotification::new(SessionId::new(child.as_str())))
                    .unwrap();
                child
            };
            let (resp, child) = tokio::join!(turn, canceller);
            Ok((resp?.stop_reason, parent, child))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(live.acplb.permissions.seen().len(), 2, "asked twice");
    let all = live.updates.all_with_sessions();
    assert!(
        text_of(&all, &parent).contains("The escalator asked twice."),
        "{all:?}"
    );
    let states: Vec<_> = offers(&all, &parent, &child)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let asks = states.iter().filter(|s| s["state"] == "requires_action").count();
    assert_eq!(asks, 2, "each ask shown: {states:?}");
    let cancelled = states.iter().position(|s| s["stopReason"] == "cancelled");
    assert!(cancelled.is_some(), "{states:?}");
    assert_eq!(
        states.last().unwrap(),
        &json!({"state": "idle", "stopReason": "end_turn"}),
        "{states:?}"
    );
}
