//! Shutdown and `--resume`: SIGTERM asks each thread for its summary, and a new server started
//! with `--resume` continues the most recent (or the named) thread with that summary first; a
//! thread without one goes on with a warning.

use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, Script};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use super::client::{Recorder, connect, is_error, start, text, thread_of, tool};
use crate::sessions::SUMMARY_SCENARIOS;

#[tokio::test]
async fn sigterm_keeps_a_summary_and_resume_puts_it_first() {
    let dir = tempfile::tempdir().unwrap();
    let composer = dir.path().join("composer.toml");
    std::fs::write(
        &composer,
        "[[plugin]]\nid = \"session-summary\"\nprompt = \"scenario:summ Summarise, please.\"\n",
    )
    .unwrap();
    let script =
        Script::builtin().layered_with(Script::from_toml_str(SUMMARY_SCENARIOS, "summaries").unwrap());
    let composer = composer.display().to_string();
    let mut live = start(
        MockConfig::default().with_script(script),
        &["--composer", &composer],
        &[],
    );
    let mcp = connect(&mut live, Recorder::default()).await;
    let first = tool(&mcp, "codex", json!({"prompt": "scenario:plain hello"})).await;
    let thread = thread_of(&first);
    kill(Pid::from_raw(live.acplb.pid as i32), Signal::SIGTERM).unwrap();
    let (code, took) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    assert!(took < Duration::from_secs(12), "{took:?}");
    drop(mcp);
    let summary_path = live.state_dir().join("sessions").join(&thread).join("summary.md");
    let summary =
        std::fs::read_to_string(&summary_path).unwrap_or_else(|e| panic!("{e}: {}", live.acplb.stderr()));
    assert!(summary.contains("we said hello and nothing is left"), "{summary}");

    live.respawn_with(&["--resume"]);
    let recorder = Recorder::default();
    let mcp = connect(&mut live, recorder.clone()).await;
    let next = tool(&mcp, "codex", json!({"prompt": "scenario:history go on"})).await;
    assert!(!is_error(&next), "{next:?}\n{}", live.acplb.stderr());
    assert_eq!(thread_of(&next), thread, "the most recent thread goes on");
    assert!(text(&next).starts_with("history seen=true"), "{next:?}");
    let last = live.mock.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("<previous-session-summary>") && last.contains("we said hello and nothing is left"),
        "{last}"
    );
    assert!(recorder.logs.lock().unwrap().is_empty());
    // Only the first call resumes: the next starts a thread of its own.
    let fresh = tool(&mcp, "codex", json!({"prompt": "hello"})).await;
    assert_ne!(thread_of(&fresh), thread);
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn resume_of_a_named_thread_without_a_summary_warns_and_goes_on() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let mcp = connect(&mut live, Recorder::default()).await;
    let named = thread_of(&tool(&mcp, "codex", json!({"prompt": "scenario:history one"})).await);
    let newer = thread_of(&tool(&mcp, "codex", json!({"prompt": "hello"})).await);
    assert_ne!(named, newer);
    mcp.cancel().await.unwrap();
    live.acplb.wait_exit(Duration::from_secs(20)).await;
    live.respawn_with(&["--resume", &named]);
    let recorder = Recorder::default();
    let mcp = connect(&mut live, recorder.clone()).await;
    let next = tool(&mcp, "codex", json!({"prompt": "scenario:history two"})).await;
    assert_eq!(thread_of(&next), named);
    assert_eq!(text(&next), "history seen=true turns=2", "{next:?}");
    let logs = recorder.logs.lock().unwrap().clone();
    let logs = serde_json::to_string(&logs).unwrap();
    assert!(logs.contains("has no saved summary"), "{logs}");
    mcp.cancel().await.unwrap();
}
