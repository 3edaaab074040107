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

/// A stand-in `codex app-server` whose turn (logged to `turns.log`) spawns a child (`ch-1`, its
/// turn running) and which never answers the child's `turn/interrupt` (logged to
/// `child-interrupts.log`), as a frozen Codex would; the parent's interrupt it answers and ends
/// the parent's turn.
fn deaf_to_the_child(dir: &std::path::Path) -> std::path::PathBuf {
    let log = dir.join("child-interrupts.log");
    super::stand_in::fake_codex(
        dir,
        &format!(
            r#"while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{{\"id\":$i,\"result\":{{}}}}" ;;
    *'"method":"thread/start"'*) echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"th-1\"}},\"model\":\"m\"}}}}" ;;
    *'"method":"turn/start"'*)
      printf '%s\n' "$l" >> '{turns}'
      echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
      echo '{{"method":"turn/started","params":{{"threadId":"th-1","turn":{{"id":"tu-1"}}}}}}'
      echo '{{"method":"thread/started","params":{{"thread":{{"id":"ch-1","parentThreadId":"th-1"}}}}}}'
      echo '{{"method":"turn/started","params":{{"threadId":"ch-1","turn":{{"id":"ct-1"}}}}}}' ;;
    *'"method":"turn/interrupt"'*'"ch-1"'*) printf '%s\n' "$l" >> '{log}' ;;
    *'"method":"turn/interrupt"'*)
      echo "{{\"id\":$i,\"result\":{{}}}}"
      echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"interrupted"}}}}}}' ;;
    *'"method":"model/list"'*|*'"method":"skills/list"'*) echo "{{\"id\":$i,\"error\":{{\"code\":-32601,\"message\":\"not here\"}}}}" ;;
  esac
done"#,
            log = log.display(),
            turns = dir.join("turns.log").display()
        ),
    )
}

/// Codex never confirms the interrupt of a child the editor cancelled (frozen, or deaf to it):
/// the parent's turn still takes the editor's cancel, its answer comes within a second and a
/// half, and the session's next prompt reaches Codex within two seconds more (the children's
/// interrupts are waited for half a second, the one the editor asked for beside the turn), not
/// once Codex is given up for not answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_interrupt_codex_never_answers_holds_no_cancel_up() {
    let dir = tempfile::tempdir().unwrap();
    let codex = deaf_to_the_child(dir.path());
    let mut acplb = super::stand_in::spawn_app_server(dir.path(), &codex, &[]);
    let updates = crate::harness::Updates::default();
    let seen = updates.clone();
    let cwd = dir.path().to_owned();
    let (stop, took, next_took) = acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &cwd, json!({"subagents": {}})).await?;
            let parent = id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(id.clone(), vec!["go".into()]))
                .block_task();
            let canceller = async {
                let offered = || {
                    let all = seen.all_with_sessions();
                    announced(&all, &parent).iter().any(|c| {
                        let child = c["sessionId"].as_str().unwrap_or_default();
                        offers(&all, &parent, child)
                            .iter()
                            .any(|(_, caps)| caps.get("cancel").is_some())
                    })
                };
                assert!(
                    eventually(Duration::from_secs(20), offered).await,
                    "the child's cancel was never offered: {:?}",
                    seen.all_with_sessions()
                );
                let child = announced(&seen.all_with_sessions(), &parent)[0]["sessionId"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                cx.send_notification(CancelNotification::new(SessionId::new(child.as_str())))
                    .unwrap();
                let asked = || dir_has_interrupt(&cwd);
                assert!(
                    eventually(Duration::from_secs(10), asked).await,
                    "the child's interrupt never reached Codex"
                );
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
                std::time::Instant::now()
            };
            let (resp, cancelled_at) = tokio::join!(turn, canceller);
            let took = cancelled_at.elapsed();
            let stop = resp?.stop_reason;
            let next = cx
                .send_request(PromptRequest::new(id.clone(), vec!["again".into()]))
                .block_task();
            let sent = std::time::Instant::now();
            let started = || turns_started(&cwd) == 2;
            let next_started = eventually(Duration::from_secs(10), started).await;
            let next_took = sent.elapsed();
            cx.send_notification(CancelNotification::new(id.clone())).unwrap();
            assert_eq!(next.await?.stop_reason, StopReason::Cancelled);
            assert!(next_started, "the next prompt never reached Codex");
            Ok((stop, took, next_took))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        took < Duration::from_millis(1500),
        "the cancel waited on the child's interrupt: {took:?}\n{}",
        acplb.stderr()
    );
    assert!(
        next_took < Duration::from_secs(2),
        "the next prompt waited on the child's interrupt: {next_took:?}\n{}",
        acplb.stderr()
    );
}

/// How many turns the stand-in was asked to start.
fn turns_started(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("turns.log")).map_or(0, |l| l.lines().count())
}

/// Whether the stand-in logged a child's `turn/interrupt`.
fn dir_has_interrupt(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("child-interrupts.log")).is_ok_and(|l| l.contains("turn/interrupt"))
}
