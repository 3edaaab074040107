//! Secrets in what Codex prints on stderr: whether it fails to start or dies mid-turn, and
//! whichever session handed the secret over, it reaches no prompt error, journal or log.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{EnvVariable, McpServer, McpServerStdio, NewSessionRequest};

use super::codex::{files_under, unique_secret};
use super::stand_in::{app_server, fake_codex, spawn_app_server};
use crate::harness::{Acplb, Updates, prompt, transport};

/// Checks that `secret` is in none of acplb's journals or its log, and that the session's
/// journal recorded the failed turn.
async fn assert_kept_nowhere(acplb: &mut Acplb, state: &Path, secret: &str) {
    let (code, _) = acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "{}", acplb.stderr());
    let files: Vec<(PathBuf, String)> = files_under(state)
        .into_iter()
        .map(|path| {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            (path, text)
        })
        .collect();
    let journals: Vec<_> = files
        .iter()
        .filter(|(p, _)| p.ends_with("journal.jsonl"))
        .collect();
    assert!(
        journals.iter().any(|(_, text)| text.contains("\"error\"")),
        "the failed turn is in a journal: {files:?}"
    );
    for (path, text) in &files {
        assert!(
            !text.contains(secret),
            "{} holds the secret:\n{text}",
            path.display()
        );
    }
    assert!(!acplb.stderr().contains(secret), "the log holds the secret");
}

#[tokio::test]
async fn a_secret_codex_prints_as_it_fails_to_start_reaches_no_error_journal_or_log() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let secret = unique_secret("sk-proj");
    // The same on both transports: `codex exec` and `codex app-server` die at once, before
    // the turn (or `initialize`) gets an answer.
    let codex = fake_codex(
        dir.path(),
        &format!("echo 'Error: the provider refused the key {secret}' >&2\nexit 3"),
    );
    let env = [
        ("ACPLB_CODEX".to_owned(), codex.display().to_string()),
        ("ACPLB_STATE_DIR".to_owned(), state.path().display().to_string()),
    ];
    let mut acplb = Acplb::spawn(&["--transport", &transport()], &env, dir.path());
    let result = acplb.hello(dir.path()).await;
    let err = result.expect_err("Codex died");
    let text = serde_json::to_string(&err).unwrap();
    assert!(
        err.message.contains("exit status: 3") && err.message.contains("the provider refused the key"),
        "the stderr is shown: {err:?}"
    );
    assert!(!text.contains(&secret), "the secret reached the editor: {text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    assert_kept_nowhere(&mut acplb, state.path(), &secret).await;
}

#[tokio::test]
async fn one_sessions_mcp_secret_never_reaches_another_when_the_shared_server_dies() {
    if transport() == "exec" {
        // Every exec turn has a Codex of its own: nothing is shared between sessions.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // A value no secret pattern knows, under a name that says nothing: only the exact value
    // of session A's MCP server marks it as a secret.
    let secret = unique_secret("plain-value");
    // When a turn starts, the server prints every thread it started (A's carries the value
    // in its MCP server's `env`) and dies.
    let log = dir.path().join("threads.log");
    let codex = app_server(dir.path(), &format!("cat '{}' >&2; exit 3", log.display()));
    let state_dir = state.path().display().to_string();
    let mut acplb = spawn_app_server(dir.path(), &codex, &[("ACPLB_STATE_DIR", &state_dir)]);
    let cwd = dir.path().to_owned();
    let value = secret.clone();
    let result = acplb
        .client(&Updates::default(), async |cx| {
            open_session_with(&cx, &cwd, &value).await?;
            let b = cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
            // Both threads started before B's turn kills the server.
            let started = crate::harness::eventually(std::time::Duration::from_secs(10), || {
                std::fs::read_to_string(&log).is_ok_and(|l| l.lines().count() == 2)
            })
            .await;
            assert!(started, "both sessions' threads started");
            Ok(prompt(&cx, &b.session_id, "hello").await)
        })
        .await
        .unwrap();
    assert!(
        std::fs::read_to_string(&log).unwrap().contains(&secret),
        "the stand-in printed A's value"
    );
    let err = result.expect_err("the server died");
    let text = serde_json::to_string(&err).unwrap();
    assert!(err.message.contains("exit status: 3"), "{err:?}");
    assert!(text.contains("thread/start"), "the stderr is shown: {text}");
    assert!(!text.contains(&secret), "A's secret reached B's editor: {text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    assert_kept_nowhere(&mut acplb, state.path(), &secret).await;
}

/// `initialize`, then `session/new` in `cwd` with one stdio MCP server whose `env` holds `value`.
async fn open_session_with(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    cwd: &Path,
    value: &str,
) -> Result<agent_client_protocol::v1::schema::NewSessionResponse, agent_client_protocol::Error> {
    cx.send_request(agent_client_protocol::v1::schema::InitializeRequest::new(
        agent_client_protocol::schema::ProtocolVersion::V1,
    ))
    .block_task()
    .await?;
    let server = McpServer::Stdio(
        McpServerStdio::new("files", "/bin/true").env(vec![EnvVariable::new("FILES_ROOT", value)]),
    );
    cx.send_request(NewSessionRequest::new(cwd).mcp_servers(vec![server]))
        .block_task()
        .await
}
