//! Subagents that outlive their parent's turn (shown between turns to a client that takes
//! ACP's subagent sessions) when things go wrong, with the real Codex and the mock model on
//! app-server: Codex killed between turns leaves the child `unknown` at once, and the next
//! prompt runs on a new Codex; the client leaving, or closing the session, while a child works
//! leaves no Codex work behind.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionId, StopReason};
use serde_json::json;

use crate::harness::{Updates, eventually, open_session_as, prompt};
use crate::subagent_sessions::{a_child_runs, announced, app_server, states};
use crate::subagents::{live, on_exec};

/// A session of a client that takes ACP's subagent sessions, whose prompt
/// `scenario:subagent_leave` was answered leaving a child that runs `sleep 30`, once the
/// child's sleep shows: the session, its id as text, and the prompt's stop reason.
async fn sleeper_left(
    cx: &ConnectionTo<Agent>,
    ws: &Path,
    seen: &Updates,
) -> Result<(SessionId, String, StopReason), agent_client_protocol::Error> {
    let id = open_session_as(cx, ws, json!({"subagents": {}})).await?;
    let parent = id.to_string();
    let first = prompt(cx, &id, "scenario:subagent_leave go").await?.stop_reason;
    let sleeping = || a_child_runs(&seen.all_with_sessions(), &parent, "sleep 30");
    assert!(
        eventually(Duration::from_secs(30), sleeping).await,
        "the child's sleep never showed"
    );
    Ok((id, parent, first))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_killed_between_turns_leaves_the_child_unknown_and_the_next_prompt_runs() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let marker = live.codex_marker();
    let (first, next, parent) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, parent, first) = sleeper_left(&cx, &ws, &seen).await?;
            // The child still runs after the answer, shown so.
            let all = seen.all_with_sessions();
            let child = announced(&all, &parent)[0]["sessionId"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert_eq!(
                states(&all, &parent, &child).last(),
                Some(&json!({"state": "running"}))
            );
            let server = app_server(&marker).expect("the app-server runs");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(server).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let gone = eventually(Duration::from_secs(10), || app_server(&marker) != Some(server)).await;
            assert!(gone, "the app-server did not die");
            // Shown at once, with no prompt needed.
            let unknown = || {
                let all = seen.all_with_sessions();
                states(&all, &parent, &child).last() == Some(&json!({"state": "unknown"}))
            };
            assert!(
                eventually(Duration::from_secs(10), unknown).await,
                "the child still shows running: {:?}",
                seen.all_with_sessions()
            );
            let next = prompt(&cx, &id, "scenario:plain hello again").await?.stop_reason;
            Ok((first, next, parent))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, StopReason::EndTurn);
    assert_eq!(next, StopReason::EndTurn, "the next prompt ran on a new Codex");
    let all = live.updates.all_with_sessions();
    let child = announced(&all, &parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = states(&all, &parent, &child).pop().unwrap();
    assert_eq!(last, json!({"state": "unknown"}), "{all:?}");
}

/// The client goes away while a child it was shown works between turns: acplb exits and no
/// Codex work (the child's `sleep 30`) is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_while_a_child_works_between_turns_leaves_no_codex_work() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let first = live
        .acplb
        .client(&updates, async move |cx| {
            let (_, _, first) = sleeper_left(&cx, &ws, &seen).await?;
            Ok(first)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, StopReason::EndTurn);
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    let left =
        crate::harness::codex_work_left(&live.codex_marker(), live.acplb.pid, Duration::from_secs(5)).await;
    assert!(left.is_empty(), "Codex work left: {:?}", live.codex_left());
}

/// The editor closes the session while a child it was shown works between turns: the child
/// stops with it (nobody would see what it does), its `sleep 30` with it, while acplb serves
/// on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_session_stops_a_child_working_between_turns() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (marker, acplb_pid) = (live.codex_marker(), live.acplb.pid);
    let (first, left, next) = live
        .acplb
        .client(&updates, async move |cx| {
            let (id, _, first) = sleeper_left(&cx, &ws, &seen).await?;
            cx.send_request(agent_client_protocol::v1::schema::CloseSessionRequest::new(id))
                .block_task()
                .await?;
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(5)).await;
            // acplb serves on: a new session answers.
            let other = cx
                .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(&ws))
                .block_task()
                .await?;
            let next = prompt(&cx, &other.session_id, "scenario:plain hello")
                .await?
                .stop_reason;
            Ok((first, left, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, StopReason::EndTurn);
    assert!(left.is_empty(), "Codex work left after the close: {left:?}");
    assert_eq!(next, StopReason::EndTurn);
}
