//! Cancelling a running turn and losing the client mid-turn: Codex's processes must be gone,
//! the prompt must say `cancelled`, and the session (or acplb) must carry on (or exit) cleanly.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, StopReason};

use crate::harness::{open_session, prompt, until_sleeping};
use crate::live::Live;

#[tokio::test]
async fn cancel_during_a_long_command_stops_codex_within_a_second() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let (stop, cancel_took, left_after_cancel, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec!["scenario:sleep wait".into()]);
            let turn = cx.send_request(request).block_task();
            let canceller = async {
                until_sleeping(&updates).await;
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))
                    .unwrap();
                at
            };
            let (resp, cancelled_at) = tokio::join!(turn, canceller);
            let took = cancelled_at.elapsed();
            // Checked before the next turn starts a Codex of its own.
            // acplb carries the same CODEX_HOME (Codex inherits it) and is still running.
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            let next = prompt(&cx, &s.session_id, "scenario:plain still there?").await?;
            Ok((resp?.stop_reason, took, left, next))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        cancel_took < Duration::from_secs(1),
        "cancel took {cancel_took:?}"
    );
    assert_eq!(
        next.stop_reason,
        StopReason::EndTurn,
        "the session still works after a cancel"
    );
    // The conversation carries over: the turn after the cancel resumed the same Codex thread.
    let threads = live.thread_ids();
    assert!(
        threads.len() >= 2 && threads.iter().all(|t| !t.is_empty() && *t == threads[0]),
        "{threads:?}"
    );
    // The sleep tool call was closed with a final status.
    let call = updates
        .of_kind("tool_call")
        .into_iter()
        .find(|c| c["title"] == "sleep 30")
        .unwrap();
    let last = updates
        .of_kind("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == call["toolCallId"]);
    assert_eq!(last.expect("the sleep call was closed")["status"], "failed");
    assert!(
        left_after_cancel.is_empty(),
        "codex processes left after the cancel: {left_after_cancel:?}"
    );
}

#[tokio::test]
async fn client_leaving_mid_turn_makes_acplb_exit_cleanly_with_no_orphans() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec!["scenario:sleep wait".into()]);
            let turn = cx.send_request(request);
            until_sleeping(&updates).await;
            // Leave without waiting: returning closes acplb's stdin.
            turn.detach();
            Ok(())
        })
        .await
        .unwrap();
    let (code, took) = live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "stderr: {}", live.acplb.stderr());
    assert!(took < Duration::from_secs(1), "exit took {took:?}");
    assert!(
        live.codex_left().is_empty(),
        "codex processes left: {:?}\n{}",
        live.codex_left(),
        live.acplb.stderr()
    );
}

#[tokio::test]
async fn a_prompt_sent_during_a_turn_is_queued_not_interleaved() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let a = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:shell one".into()],
            ));
            let b = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:plain two".into()],
            ));
            let (a, b) = tokio::join!(a.block_task(), b.block_task());
            Ok((a?, b?))
        })
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::EndTurn);
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    // The second turn's text comes after everything of the first turn.
    let text = updates.agent_text();
    let first_end = text
        .find("The directory listing succeeded")
        .expect("first turn answered");
    let second_start = text
        .find("Hello! I am the mock model")
        .expect("second turn answered");
    assert!(first_end < second_start, "{text}");
    let requests = live.mock.requests();
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.scenario.as_deref() == Some("plain"))
            .count(),
        1
    );
}

#[tokio::test]
async fn codex_dying_mid_turn_is_a_clear_error_and_the_session_goes_on() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let (failed, left_after_crash, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec!["scenario:sleep wait".into()]);
            let turn = cx.send_request(request).block_task();
            let killer = async {
                until_sleeping(&updates).await;
                // Kill Codex itself (the process acplb started), as a crash would.
                for pid in crate::harness::processes_with_env(&marker) {
                    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
                    let codex = matches!(args.get(1).copied(), Some(b"exec" | b"app-server"));
                    if codex {
                        let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
                        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
                    }
                }
            };
            let (failed, ()) = tokio::join!(turn, killer);
            // Checked before the next turn starts a Codex of its own; acplb has the marker too.
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            let next = prompt(&cx, &s.session_id, "scenario:plain are you back?").await?;
            Ok((failed, left, next))
        })
        .await
        .unwrap();
    let err = failed.unwrap_err();
    // Editors show the message: it must say what happened, not "Internal error".
    assert!(
        err.message.contains("exited before the turn finished") && err.message.contains("signal: 9"),
        "{err:?}"
    );
    // Scripts tell a crash by its reason; the exit status stays beside it.
    let data = err.data.as_ref().unwrap();
    assert_eq!(data["reason"], "provider_exited", "{err:?}");
    assert!(
        data["exitStatus"]
            .as_str()
            .is_some_and(|s| s.contains("signal: 9")),
        "{err:?}"
    );
    assert_eq!(next.stop_reason, StopReason::EndTurn);
    assert!(
        updates.closed_as_failed("sleep 30"),
        "the sleep 30 tool call was shown, then closed as failed"
    );
    assert!(
        left_after_crash.is_empty(),
        "codex processes left after the crash: {left_after_crash:?}"
    );
}

#[tokio::test]
async fn sigterm_mid_turn_kills_codex_and_exits_zero_within_a_second() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(live.acplb.pid).unwrap());
    let client = live.acplb.client(&updates, async |cx| {
        let (_, s) = open_session(&cx, &ws).await?;
        let request = PromptRequest::new(s.session_id.clone(), vec!["scenario:sleep wait".into()]);
        let turn = cx.send_request(request).block_task();
        let term = async {
            until_sleeping(&updates).await;
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
            Instant::now()
        };
        let (_, sent) = tokio::join!(turn, term);
        Ok(sent)
    });
    let sent = client.await.unwrap();
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "stderr: {}", live.acplb.stderr());
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "exit took {:?}",
        sent.elapsed()
    );
    assert!(
        live.codex_left().is_empty(),
        "codex processes left: {:?}",
        live.codex_left()
    );
}
