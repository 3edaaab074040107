//! acplb stopped by any signal in the middle of a turn: Codex, bubblewrap and the sandboxed
//! command must go with it, even when acplb itself gets no chance to clean up (SIGKILL).

use std::time::Duration;

use agent_client_protocol::v1::schema::PromptRequest;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::harness::{Updates, eventually, open_session};
use crate::live::Live;

fn sleeping(updates: &Updates) -> bool {
    updates
        .of_kind("tool_call")
        .iter()
        .any(|c| c["title"] == "sleep 30")
}

/// Starts a turn that runs `sleep 30` through the real Codex, sends `signal` to acplb once the
/// command runs, and returns what is left of Codex's process tree a little later.
async fn signal_mid_turn(signal: Signal) -> (Live, Vec<String>) {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let pid = live.acplb.pid;
    let client = live.acplb.client(&updates, async |cx| {
        let (_, s) = open_session(&cx, &ws).await?;
        let turn = cx
            .send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:sleep wait".into()],
            ))
            .block_task();
        let killer = async {
            assert!(
                eventually(Duration::from_secs(30), || sleeping(&updates)).await,
                "sleep 30 never started"
            );
            kill(Pid::from_raw(pid as i32), signal).unwrap();
        };
        let (_, ()) = tokio::join!(turn, killer);
        Ok(())
    });
    // The connection ends with acplb; how it ends does not matter here.
    drop(tokio::time::timeout(Duration::from_secs(40), client).await);
    let marker = live.codex_marker();
    let gone = eventually(Duration::from_secs(3), || {
        crate::harness::processes_with_env(&marker)
            .into_iter()
            .all(|p| p == pid)
    })
    .await;
    let acplb = format!("{pid} ");
    let left = if gone {
        Vec::new()
    } else {
        // acplb itself carries the marker too (a SIGINT/SIGHUP may still be ending it).
        live.codex_left()
            .into_iter()
            .filter(|p| !p.starts_with(&acplb))
            .collect()
    };
    (live, left)
}

#[tokio::test]
async fn sigint_mid_turn_stops_codex_and_acplb() {
    let (mut live, left) = signal_mid_turn(Signal::SIGINT).await;
    assert!(left.is_empty(), "left running after SIGINT: {left:?}");
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0), "SIGINT is a clean stop: {}", live.acplb.stderr());
}

#[tokio::test]
async fn sighup_mid_turn_stops_codex_and_acplb() {
    let (mut live, left) = signal_mid_turn(Signal::SIGHUP).await;
    assert!(left.is_empty(), "left running after SIGHUP: {left:?}");
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0), "SIGHUP is a clean stop: {}", live.acplb.stderr());
}

#[tokio::test]
async fn sigkill_mid_turn_leaves_no_codex_behind() {
    let (mut live, left) = signal_mid_turn(Signal::SIGKILL).await;
    assert!(
        left.is_empty(),
        "Codex's tree outlived a SIGKILLed acplb: {left:?}"
    );
    let _ = live.acplb.wait_exit(Duration::from_secs(5)).await;
}
