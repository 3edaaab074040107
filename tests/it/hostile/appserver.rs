//! Faults of the shared `codex app-server`: one that dies at start (explained, started again
//! only when the next prompt needs it, never in a loop), one that never answers (a cancel still
//! ends the prompt at once), a Codex without `app-server` (told to use `--transport exec`), and
//! one that prints garbage and asks what acplb cannot answer (declined; the turn goes on), and
//! one found gone by a turn's first request (replaced; the turn runs on the thread resumed).

use std::path::Path;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, StopReason};

use super::stand_in::{fake_codex, spawn_app_server};
use crate::harness::{Acplb, Updates, open_session, prompt};

fn spawn(dir: &Path, codex: &Path) -> Acplb {
    spawn_app_server(dir, codex, &[])
}

#[tokio::test]
async fn a_server_that_dies_at_start_is_explained_and_started_again_only_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let codex = fake_codex(
        dir.path(),
        &format!(
            "echo started >> '{}'\necho 'panic: the stand-in crashed on purpose' >&2\nexit 3",
            starts.display()
        ),
    );
    let mut acplb = spawn(dir.path(), &codex);
    let cwd = dir.path().to_owned();
    let (first, second) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let first = prompt(&cx, &s.session_id, "hello").await;
            let second = prompt(&cx, &s.session_id, "hello again").await;
            Ok((first, second))
        })
        .await
        .unwrap();
    for result in [first, second] {
        let err = result.expect_err("a dead server fails the prompt");
        assert!(
            err.message.contains("exit status: 3") && err.message.contains("crashed on purpose"),
            "{err:?}"
        );
    }
    let count = std::fs::read_to_string(&starts).unwrap().lines().count();
    // One start in the background at session/new may coincide with the first prompt's.
    assert!(
        (2..=3).contains(&count),
        "started once per need, not in a loop: {count}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_does_not_hold_up_a_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(dir.path(), "exec sleep 600");
    let mut acplb = spawn(dir.path(), &codex);
    let cwd = dir.path().to_owned();
    let (stop, took) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            // The cancel follows the prompt on the wire, so it finds the turn waiting on the server.
            let request = cx.send_request(PromptRequest::new(s.session_id.clone(), vec!["hello".into()]));
            let at = Instant::now();
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            let stop = request.block_task().await?;
            Ok((stop.stop_reason, at.elapsed()))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_secs(1), "{took:?}");
    let (code, exited_in) = acplb.wait_exit(Duration::from_secs(5)).await;
    assert_eq!(code, Some(0));
    assert!(
        exited_in < Duration::from_secs(2),
        "the hung server is stopped on exit: {exited_in:?}"
    );
}

#[tokio::test]
async fn a_codex_without_app_server_says_to_use_the_exec_transport() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        "echo \"error: unrecognized subcommand '$1'\" >&2\nexit 2",
    );
    let mut acplb = spawn(dir.path(), &codex);
    let result = acplb.hello(dir.path()).await;
    let err = result.expect_err("no app-server");
    assert!(err.message.contains("--transport exec"), "{err:?}");
}

#[tokio::test]
async fn garbage_and_unknown_requests_from_the_server_are_survived() {
    let dir = tempfile::tempdir().unwrap();
    // Answers by reading each request's id; says odd things in between.
    let codex = fake_codex(
        dir.path(),
        r#"id() { sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
next() { while read -r l; do case "$l" in *'"method":"model/list"'*|*'"method":"skills/list"'*|*'"method":"permissionProfile/list"'*) echo "{\"id\":$(echo "$l" | id),\"error\":{\"code\":-32601,\"message\":\"no model/list here\"}}" ;; *) return 0 ;; esac; done; return 1; }
read -r l; i=$(echo "$l" | id)
echo 'this is not json'
printf '\377\376 not utf-8\n'
echo '{"method":"something/new","params":{"threadId":"th-1"}}'
echo "{\"id\":$i,\"result\":{}}"
next
next; i=$(echo "$l" | id)
echo "{\"id\":$i,\"result\":{\"thread\":{\"id\":\"th-1\"},\"model\":\"m\"}}"
next; i=$(echo "$l" | id)
echo "{\"id\":$i,\"result\":{\"turn\":{\"id\":\"tu-1\"}}}"
echo '{"id":0,"method":"item/tool/call","params":{"threadId":"th-1","turnId":"tu-1"}}'
read -r answer
echo "$answer" > answer.json
echo '{"method":"item/agentMessage/delta","params":{"threadId":"th-1","turnId":"tu-1","itemId":"m1","delta":"still here"}}'
echo '{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"completed"}}}'
exec sleep 600"#,
    );
    let mut acplb = spawn(dir.path(), &codex);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let stop = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            prompt(&cx, &s.session_id, "hello").await
        })
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert!(
        updates.agent_text().contains("still here"),
        "{:?}",
        updates.json()
    );
    let answer: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("answer.json")).unwrap()).unwrap();
    assert_eq!(answer["id"], 0);
    assert_eq!(
        answer["error"]["code"], -32601,
        "an unknown request is declined: {answer}"
    );
}

#[tokio::test]
async fn a_dying_server_that_prints_an_mcp_secret_is_explained_without_it() {
    let dir = tempfile::tempdir().unwrap();
    // Answers `initialize`, then prints the session's `thread/start` (which carries the MCP
    // server's environment) on stderr and dies.
    let codex = fake_codex(
        dir.path(),
        r#"read -r l; i=$(echo "$l" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'); echo "{\"id\":$i,\"result\":{}}"
read -r l
read -r l; echo "panic: could not start thread: $l" >&2
exit 3"#,
    );
    let secret = format!("s3cret-{}-value", std::process::id());
    let mut acplb = spawn(dir.path(), &codex);
    let cwd = dir.path().to_owned();
    let token = secret.clone();
    let result = acplb
        .client(&Updates::default(), async |cx| {
            let server = agent_client_protocol::v1::schema::McpServer::Stdio(
                agent_client_protocol::v1::schema::McpServerStdio::new("files", "/bin/true").env(vec![
                    agent_client_protocol::v1::schema::EnvVariable::new("TOKEN", token),
                ]),
            );
            cx.send_request(agent_client_protocol::v1::schema::InitializeRequest::new(
                agent_client_protocol::schema::ProtocolVersion::V1,
            ))
            .block_task()
            .await?;
            let s = cx
                .send_request(
                    agent_client_protocol::v1::schema::NewSessionRequest::new(&cwd).mcp_servers(vec![server]),
                )
                .block_task()
                .await?;
            Ok(prompt(&cx, &s.session_id, "hello").await)
        })
        .await
        .unwrap();
    let err = result.expect_err("the server died");
    let text = serde_json::to_string(&err).unwrap();
    assert!(err.message.contains("exit status: 3"), "{err:?}");
    assert!(
        err.message.contains("could not start thread"),
        "the stderr is shown: {err:?}"
    );
    assert!(!text.contains(&secret), "the secret reached the editor: {text}");
    assert!(text.contains("[REDACTED]"), "{text}");
    assert!(!acplb.stderr().contains(&secret), "the log holds the secret");
}

/// A `codex` in front of the real one that, once, lets its app-server die just as the second
/// `turn/start` arrives (the line is never passed on): a server found gone by a turn's first
/// request, as when an idle server dies the instant a prompt comes.
fn dies_at_the_second_turn(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let real = acplb_playback::mock_model::codex_env::codex_binary().unwrap();
    let marker = dir.join("died-once");
    let script = format!(
        r#"#!/usr/bin/env bash
real='{real}'
if [ "$1" != app-server ] || [ -e '{marker}' ]; then exec "$real" "$@"; fi
n=0
while IFS= read -r line; do
  case "$line" in *'"method":"turn/start"'*) n=$((n+1)) ;; esac
  if [ "$n" -ge 2 ]; then touch '{marker}'; exit 0; fi
  printf '%s\n' "$line"
done | "$real" "$@"
"#,
        real = real.display(),
        marker = marker.display()
    );
    let path = dir.join("codex");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_found_gone_by_a_turns_first_request_is_replaced_and_the_turn_runs() {
    let dir = tempfile::tempdir().unwrap();
    let codex = dies_at_the_second_turn(dir.path());
    let env = [("ACPLB_CODEX".to_owned(), codex.display().to_string())];
    let transcripts = dir.path().join("transcripts");
    let transcript_dir = transcripts.display().to_string();
    let mut live = crate::live::Live::start_with(
        acplb_playback::mock_model::MockConfig::default(),
        &["--transport", "app-server", "--transcript-dir", &transcript_dir],
        &env,
    );
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let first = prompt(&cx, &s.session_id, "scenario:plain first").await?;
            let second = prompt(&cx, &s.session_id, "scenario:plain SECOND-TOKEN").await?;
            Ok((first.stop_reason, second.stop_reason))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        dir.path().join("died-once").exists(),
        "the first server died at the second turn"
    );
    assert_eq!(first, StopReason::EndTurn);
    assert_eq!(
        second,
        StopReason::EndTurn,
        "the turn ran on a new server: {}",
        live.acplb.stderr()
    );
    assert!(
        live.mock
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("SECOND-TOKEN")),
        "the model got the second prompt"
    );
    let threads = live.thread_ids();
    assert!(
        threads.len() >= 2 && threads.iter().all(|t| *t == threads[0]),
        "the new server resumed the same thread: {threads:?}"
    );
    // The turn's transcript keeps both attempts, on two servers.
    let turn_starts = |path: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|l| l["start"]["transport"] == "app-server")
            .collect()
    };
    let session_dir = std::fs::read_dir(&transcripts)
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .expect("the session's transcripts")
        .path();
    let starts: Vec<Vec<serde_json::Value>> = std::fs::read_dir(&session_dir)
        .unwrap()
        .flatten()
        .map(|e| turn_starts(&e.path()))
        .filter(|s| !s.is_empty())
        .collect();
    let retried = starts
        .iter()
        .find(|s| s.len() == 2)
        .unwrap_or_else(|| panic!("one turn with both attempts: {starts:?}"));
    assert_ne!(
        retried[0]["start"]["server"], retried[1]["start"]["server"],
        "{retried:?}"
    );
}
