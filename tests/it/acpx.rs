//! acplb driven by acpx, a real command-line ACP client (pinned, from npm; `scripts/test`
//! installs it), against the real Codex and the mock model.

use std::path::PathBuf;
use std::time::Duration;

use acplb_playback::mock_model::codex_env::{CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel};

/// The acpx binary: `$ACPLB_ACPX_TEST_BIN` (what `scripts/test` exports), else where
/// `scripts/install-test-deps --with-acpx` links it.
fn acpx() -> PathBuf {
    let path = std::env::var_os("ACPLB_ACPX_TEST_BIN").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/acplb/bin/acpx"),
        PathBuf::from,
    );
    assert!(
        path.exists(),
        "acpx not found at {}: run scripts/install-test-deps --with-acpx",
        path.display()
    );
    path
}

#[tokio::test]
async fn acpx_sets_mode_and_network_as_config_options_and_the_turn_runs() {
    codex_binary().expect("the pinned Codex is installed");
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let env = CodexTestEnv::new(mock.base_url()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let agent = format!(
        "{} -c features.unbounded_connection_retries=false",
        env!("CARGO_BIN_EXE_acplb")
    );
    let out = tokio::process::Command::new(acpx())
        .args(["--agent", &agent, "--cwd"])
        .arg(env.workspace())
        .args(["--format", "json", "--approve-all", "--timeout", "60", "exec"])
        .args([
            "--config-option",
            "mode=auto",
            "--config-option",
            "network_access=true",
        ])
        .arg("scenario:plain hello from acpx")
        .envs(env.env_vars())
        .env("ACPLB_CODEX", env.codex_path())
        // acpx keeps its own state under HOME; keep it out of the user's.
        .env("HOME", home.path())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), out)
        .await
        .expect("acpx finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "acpx failed: {stderr}\n{stdout:.4000}");
    assert!(
        stdout.contains(r#""currentModeId":"auto""#),
        "the mode option changed the session mode: {stdout:.4000}"
    );
    assert!(stdout.contains(r#""stopReason":"end_turn""#), "{stdout:.4000}");
    assert!(!stdout.contains("unknown config option"), "{stdout:.4000}");
    // The turn ran in auto mode with network on: Codex got the workspace-write sandbox.
    let requests = mock.requests();
    let body = requests
        .first()
        .expect("Codex reached the mock model")
        .body
        .to_string();
    assert!(
        body.contains("`sandbox_mode` is `workspace-write`"),
        "Codex was not told it may write: {body:.3000}"
    );
    assert!(
        body.contains("Network access is enabled"),
        "network access on: {body:.3000}"
    );
}

/// acpx keeps a named persistent session and, once acplb has exited (its queue owner's idle
/// time ran out), starts a new acplb and reconnects the session through `session/resume`: the
/// next prompt continues the same Codex conversation.
#[tokio::test]
async fn acpx_reconnects_a_named_session_after_acplb_restarted() {
    codex_binary().expect("the pinned Codex is installed");
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let env = CodexTestEnv::new(mock.base_url()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let agent = format!(
        "{} -c features.unbounded_connection_retries=false",
        env!("CARGO_BIN_EXE_acplb")
    );
    let acpx_run = async |args: &[&str]| run_acpx(&agent, &env, home.path(), args).await;
    acpx_run(&["sessions", "new", "--name", "keep"]).await;
    let first = acpx_run(&["prompt", "-s", "keep", "scenario:plain first"]).await;
    assert!(first.contains(r#""stopReason":"end_turn""#), "{first:.4000}");
    // The queue owner, and with it acplb, exits after 1 s idle; wait until no acplb of this
    // test is left, so the next prompt surely starts a new one.
    let marker = format!("CODEX_HOME={}", env.home().display());
    let gone = crate::harness::eventually(Duration::from_secs(30), || {
        crate::harness::processes_with_env(&marker).is_empty()
    })
    .await;
    assert!(gone, "acplb exited once acpx's queue owner went idle");
    let second = acpx_run(&["prompt", "-s", "keep", "scenario:history again"]).await;
    assert!(
        second.contains("history seen=true"),
        "the reconnected session continues the conversation: {second:.4000}"
    );
    let threads: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r.header("thread-id").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(threads.first(), threads.last(), "one Codex thread: {threads:?}");
}

/// `acpx --agent AGENT ... ARGS` in the test's workspace; its stdout once it succeeded.
async fn run_acpx(agent: &str, env: &CodexTestEnv, home: &std::path::Path, args: &[&str]) -> String {
    let mut cmd = tokio::process::Command::new(acpx());
    cmd.args(["--agent", agent, "--cwd"])
        .arg(env.workspace())
        .args([
            "--format",
            "json",
            "--approve-all",
            "--timeout",
            "60",
            "--ttl",
            "1",
        ])
        .args(args)
        .envs(env.env_vars())
        .env("ACPLB_CODEX", env.codex_path())
        // acpx keeps its own state under HOME, acplb its sessions: both out of the user's.
        .env("HOME", home)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(90), cmd.output())
        .await
        .expect("acpx finishes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "acpx {args:?} failed: {stderr}\n{stdout:.4000}"
    );
    stdout
}
