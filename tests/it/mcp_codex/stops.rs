//! How a call's turn stops: the caller cancels it (`notifications/cancelled`), the request time
//! limit runs out, or Codex dies mid-turn; each leaves no command behind and the thread usable.

use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use nix::sys::signal::Signal;
use rmcp::model::{CallToolRequest, ClientRequest};
use rmcp::service::{PeerRequestOptions, RequestHandle, RoleClient};
use serde_json::json;

use super::client::{Mcp, Recorder, all_text, call, connect, is_error, start, text, thread_of, tool};
use crate::harness::{codex_work_left, eventually};

/// Waits until the progress notifications show `sleep 30` started.
async fn until_sleeping(recorder: &Recorder) {
    let sleeping = || {
        recorder
            .progress
            .lock()
            .unwrap()
            .iter()
            .any(|p| p.message.as_deref().is_some_and(|m| m.contains("sleep 30")))
    };
    assert!(
        eventually(Duration::from_secs(30), sleeping).await,
        "sleep 30 never started"
    );
}

/// A first thread (so later turns can continue it), then a `scenario:sleep` call started in it
/// and left running.
async fn sleeping_call(mcp: &Mcp) -> (String, RequestHandle<RoleClient>) {
    let first = tool(mcp, "codex", json!({"prompt": "scenario:history one"})).await;
    let thread = thread_of(&first);
    let args = json!({"prompt": "scenario:sleep now", "threadId": thread});
    let handle = mcp
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(call("codex-reply", args, None))),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    (thread, handle)
}

#[tokio::test]
async fn a_cancelled_call_stops_the_turn_and_its_command() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let recorder = Recorder::default();
    let mcp = connect(&mut live, recorder.clone()).await;
    let (thread, handle) = sleeping_call(&mcp).await;
    until_sleeping(&recorder).await;
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let left = codex_work_left(&live.codex_marker(), live.acplb.pid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "left behind: {:?}", live.codex_left());
    // No answer to a cancelled call: what Codex said so far comes as a log message naming the
    // thread.
    #[expect(deprecated, reason = "MCP logging is how the server tells a cancelled caller")]
    let told = || {
        recorder.logs.lock().unwrap().iter().any(|l| {
            let data = l.data.to_string();
            data.contains("call cancelled")
                && data.contains(&thread)
                && data.contains("what Codex said so far")
        })
    };
    assert!(
        eventually(Duration::from_secs(10), told).await,
        "{:?}",
        recorder.logs.lock().unwrap()
    );
    // The thread goes on: its next turn sees the earlier ones.
    let next = tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "scenario:history three", "threadId": thread}),
    )
    .await;
    assert!(!is_error(&next), "{next:?}");
    assert!(text(&next).starts_with("history seen=true"), "{next:?}");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn the_request_time_limit_stops_the_turn_with_an_error_naming_it() {
    let mut live = start(MockConfig::default(), &["--request-timeout", "2"], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let started = std::time::Instant::now();
    let result = tool(&mcp, "codex", json!({"prompt": "scenario:sleep now"})).await;
    assert!(is_error(&result), "{result:?}");
    assert!(
        all_text(&result).contains("request time limit of 2 s"),
        "{}",
        all_text(&result)
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let _thread = thread_of(&result);
    let left = codex_work_left(&live.codex_marker(), live.acplb.pid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "left behind: {:?}", live.codex_left());
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn codex_killed_mid_turn_is_a_tool_error_and_the_next_call_resumes() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let recorder = Recorder::default();
    let mcp = connect(&mut live, recorder.clone()).await;
    let (thread, handle) = sleeping_call(&mcp).await;
    let waiting = tokio::spawn(async move { handle.await_response().await.ok().map(|r| format!("{r:?}")) });
    until_sleeping(&recorder).await;
    let victims: Vec<u32> = crate::harness::processes_with_env(&live.codex_marker())
        .into_iter()
        .filter(|p| *p != live.acplb.pid)
        .collect();
    assert!(!victims.is_empty());
    for pid in &victims {
        let _gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
    let answer = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .unwrap()
        .unwrap()
        .expect("the call is answered");
    assert!(answer.contains("is_error: Some(true)"), "{answer}");
    assert!(answer.contains("the turn failed"), "{answer}");
    // No restart loop: the next call starts Codex again and goes on in the same thread.
    let next = tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "scenario:history three", "threadId": thread}),
    )
    .await;
    assert!(!is_error(&next), "{next:?}\n{}", live.acplb.stderr());
    assert!(text(&next).starts_with("history seen=true"), "{next:?}");
    mcp.cancel().await.unwrap();
}
