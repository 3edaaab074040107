//! Subagents that outlive their parent's turn (shown between turns to a client that takes
//! ACP's subagent sessions) when things go wrong, with the real Codex and the mock model on
//! app-server: Codex killed between turns leaves the child `unknown` at the next prompt,
//! which runs on a new Codex; the client leaving while a child works leaves no Codex work
//! behind.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, InitializeRequest, NewSessionRequest, StopReason,
};
use serde_json::json;

use crate::harness::{eventually, prompt};
use crate::subagent_sessions::{announced, states};
use crate::subagents::{live, on_exec};

/// `codex app-server`'s pid among the processes of this test's Codex home (`marker`).
fn app_server(marker: &str) -> Option<u32> {
    crate::harness::processes_with_env(marker)
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).nth(1) == Some(b"app-server".as_slice()))
        })
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
            let caps: ClientCapabilities = serde_json::from_value(json!({"subagents": {}})).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let first = prompt(&cx, &s.session_id, "scenario:subagent_leave go")
                .await?
                .stop_reason;
            // The child runs its `sleep 30` between turns, shown in its session.
            let sleeping = || {
                seen.all_with_sessions().iter().any(|(s, u)| {
                    *s != parent && u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 30")
                })
            };
            assert!(
                eventually(Duration::from_secs(30), sleeping).await,
                "the child's sleep never showed"
            );
            let server = app_server(&marker).expect("the app-server runs");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(server).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let gone = eventually(Duration::from_secs(10), || app_server(&marker) != Some(server)).await;
            assert!(gone, "the app-server did not die");
            let next = prompt(&cx, &s.session_id, "scenario:plain hello again")
                .await?
                .stop_reason;
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
            let caps: ClientCapabilities = serde_json::from_value(json!({"subagents": {}})).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let first = prompt(&cx, &s.session_id, "scenario:subagent_leave go")
                .await?
                .stop_reason;
            let sleeping = || {
                seen.all_with_sessions().iter().any(|(s, u)| {
                    *s != parent && u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 30")
                })
            };
            assert!(
                eventually(Duration::from_secs(30), sleeping).await,
                "the child's sleep never showed"
            );
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
