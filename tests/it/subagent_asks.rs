//! What a subagent left working asks between its parent's turns (ADR 0059), with the real
//! Codex and the mock model on app-server: the editor is asked in the child's own session, the
//! child shows `requires_action` until the answer, and its answer reaches Codex, whether it
//! comes between turns or after the next turn took the child up and ended.

use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionId, StopReason};
use serde_json::{Value, json};

use crate::harness::{Answer, Permissions, Updates, eventually, open_session_as, prompt};
use crate::subagent_sessions::{announced, states, text_of};
use crate::subagents::{live, on_exec};

/// A read-only session of a client that takes ACP's subagent sessions, whose prompt
/// `scenario:subagent_leave_asking` was answered leaving a child that asks for an escalation
/// after a nap; once the child's question came: the session, its id as text, the prompt's stop
/// reason and how many questions had come by the answer.
pub async fn asker_left(
    cx: &ConnectionTo<Agent>,
    ws: &std::path::Path,
    permissions: &Permissions,
) -> Result<(SessionId, String, StopReason, usize), agent_client_protocol::Error> {
    let id = open_session_as(cx, ws, json!({"subagents": {}})).await?;
    crate::live::set_mode(cx, &id, "read-only").await?;
    let stop = prompt(cx, &id, "scenario:subagent_leave_asking go")
        .await?
        .stop_reason;
    let by_answer = permissions.seen().len();
    let asked = || !permissions.seen().is_empty();
    assert!(
        eventually(Duration::from_secs(60), asked).await,
        "the child never asked"
    );
    Ok((id.clone(), id.to_string(), stop, by_answer))
}

/// Whether the one child of `parent` in `seen` ended (`idle`).
pub fn child_ended(seen: &Updates, parent: &str) -> bool {
    let all = seen.all_with_sessions();
    announced(&all, parent).first().is_some_and(|c| {
        let child = c["sessionId"].as_str().unwrap_or_default();
        states(&all, parent, child)
            .last()
            .is_some_and(|s| s["state"] == "idle")
    })
}

/// The one child of `parent` in `all`.
pub fn the_child(all: &[(String, Value)], parent: &str) -> String {
    let children = announced(all, parent);
    assert_eq!(children.len(), 1, "{all:?}");
    children[0]["sessionId"].as_str().unwrap().to_owned()
}

/// The child asks after its parent's answer: the editor is asked in the child's session, the
/// child shows `requires_action` then `running`, and, allowed, its command runs and it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_asking_between_turns_is_asked_in_its_session_and_runs_on_when_allowed() {
    if on_exec() {
        // exec shows no subagent sessions (and never asks).
        return;
    }
    let mut live = live();
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, stop, by_answer) = live
        .acplb
        .client(&updates, async move |cx| {
            let (_, parent, stop, by_answer) = asker_left(&cx, &ws, &permissions).await?;
            assert!(
                eventually(Duration::from_secs(60), || child_ended(&seen, &parent)).await,
                "the child never ended: {:?}",
                seen.all_with_sessions()
            );
            Ok((parent, stop, by_answer))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(by_answer, 0, "the child asked before its parent's answer");
    let all = live.updates.all_with_sessions();
    let child = the_child(&all, &parent);
    let asked = live.acplb.permissions.seen();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0]["sessionId"],
        child.as_str(),
        "asked in the child's session"
    );
    let shown = states(&all, &parent, &child);
    let waiting = shown.iter().position(|s| s["state"] == "requires_action");
    let waiting = waiting.unwrap_or_else(|| panic!("never shown waiting: {shown:?}"));
    assert_eq!(shown[waiting + 1]["state"], "running", "{shown:?}");
    assert_eq!(
        shown.last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"}))
    );
    assert!(
        text_of(&all, &child).contains("escalated-later"),
        "the allowed command did not run: {all:?}"
    );
}

/// The child's question is still open when the next prompt's turn takes the child up and
/// ends: the turn says again that the child waits, and the editor's answer, given after that
/// turn, still reaches Codex (the child's command runs and it ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_open_across_the_next_turn_is_still_answered_to_codex() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, next, before_next, allowed) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, parent, _, _) = asker_left(&cx, &ws, &permissions).await?;
            let before_next = seen.all_with_sessions().len();
            let next = prompt(&cx, &id, "scenario:plain again").await?.stop_reason;
            // Still open in the editor: the turn that took the child up did not withdraw it.
            assert_eq!(permissions.held_withdrawn(), [false]);
            let allowed = permissions.allow_held();
            assert!(
                eventually(Duration::from_secs(60), || child_ended(&seen, &parent)).await,
                "the child never ended: {:?}",
                seen.all_with_sessions()
            );
            Ok((parent, next, before_next, allowed))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next, StopReason::EndTurn);
    assert_eq!(allowed, 1, "one question was held");
    let all = live.updates.all_with_sessions();
    let child = the_child(&all, &parent);
    let in_next = states(&all[before_next..], &parent, &child);
    assert!(
        in_next.iter().any(|s| s["state"] == "requires_action"),
        "the next turn did not say the child still waits: {in_next:?}"
    );
    assert_eq!(
        states(&all, &parent, &child).last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"}))
    );
    assert!(
        text_of(&all, &child).contains("escalated-later"),
        "the late answer did not reach Codex: {all:?}"
    );
}

/// `scenario:subagent_ask_unanswered`: the child asks during its parent's turn and the parent
/// answers without waiting for the editor. The question stays open past the answer (the child
/// shown waiting, not cancelled), and the editor's later "allow" runs the child's command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_open_when_the_parent_answers_stays_open_and_its_answer_counts() {
    if on_exec() {
        return;
    }
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let permissions = live.acplb.permissions.clone();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, stop, by_answer, had, allowed) = live
        .acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            crate::live::set_mode(&cx, &id, "read-only").await?;
            let parent = id.to_string();
            let stop = prompt(&cx, &id, "scenario:subagent_ask_unanswered go")
                .await?
                .stop_reason;
            let (by_answer, had) = (permissions.seen().len(), seen.all_with_sessions().len());
            let allowed = permissions.allow_held();
            assert!(
                eventually(Duration::from_secs(60), || child_ended(&seen, &parent)).await,
                "the child never ended: {:?}",
                seen.all_with_sessions()
            );
            Ok((parent, stop, by_answer, had, allowed))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::EndTurn);
    assert_eq!(
        (by_answer, allowed),
        (1, 1),
        "asked during the turn, answered after it"
    );
    let all = live.updates.all_with_sessions();
    let child = the_child(&all, &parent);
    assert_eq!(
        states(&all[..had], &parent, &child).last(),
        Some(&json!({"state": "requires_action"})),
        "at the answer the child still waits for the editor: {all:?}"
    );
    assert_eq!(
        states(&all, &parent, &child).last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"}))
    );
    assert!(
        text_of(&all, &child).contains("escalated-ok"),
        "the late answer did not reach Codex: {all:?}"
    );
}
