//! The Codex side under faults and hostile input: secrets a client hands over for its MCP
//! servers, turns that run too long, a Codex that crashes, a workspace deleted under a session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::v1::schema::{
    EnvVariable, HttpHeader, McpServer, McpServerHttp, McpServerStdio, NewSessionRequest, PromptResponse,
    StopReason,
};
use base64::Engine as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::harness::{Acplb, Updates, eventually, open_session, prompt};
use crate::live::{Live, assert_end_turn};

/// A turn against the mock takes well under a second; this only stops a hang.
const TURN_LIMIT: Duration = Duration::from_secs(60);

const SCENARIOS: &str = r#"
[scenarios.mcp_env]
description = "tool_search, `getenv ECHO_TOKEN` on `mockmcp`, then `env` in the shell, then a final answer"
[[scenarios.mcp_env.steps]]
actions = [{ type = "tool_search", query = "mockmcp getenv environment variable" }]
[[scenarios.mcp_env.steps]]
actions = [{ type = "mcp_call", server = "mockmcp", tool = "getenv", arguments = { name = "ECHO_TOKEN" } }]
[[scenarios.mcp_env.steps]]
actions = [{ type = "exec", cmd = "env" }]
[[scenarios.mcp_env.steps]]
actions = [{ type = "message", text = "done" }]
"#;

/// `initialize` only (the session comes with MCP servers).
async fn initialize(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
) -> Result<(), agent_client_protocol::Error> {
    cx.send_request(agent_client_protocol::v1::schema::InitializeRequest::new(
        agent_client_protocol::schema::ProtocolVersion::V1,
    ))
    .block_task()
    .await
    .map(|_| ())
}

fn mock_config() -> MockConfig {
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "hostile-codex").unwrap());
    MockConfig::default().with_script(script)
}

/// A value no other process has on its command line.
pub(super) fn unique_secret(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}-{}-{nanos}", std::process::id())
}

/// The `playback` binary (its `mcp-echo` is the MCP server here), built next to `acplb`: cargo
/// builds only this package's binaries for these tests.
pub(crate) fn playback_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "acplb-playback", "--bin", "playback"])
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building playback failed");
            let bin = Path::new(env!("CARGO_BIN_EXE_acplb")).with_file_name("playback");
            assert!(bin.is_file(), "no playback binary at {}", bin.display());
            bin
        })
        .clone()
}

/// Watches every process's command line for `needle` until dropped; keeps what it saw.
struct CmdlineWatch {
    hits: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl CmdlineWatch {
    fn start(needle: &str) -> CmdlineWatch {
        let hits = Arc::new(Mutex::new(Vec::new()));
        let (keep, needle) = (hits.clone(), needle.as_bytes().to_vec());
        let task = tokio::spawn(async move {
            loop {
                for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                    let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else {
                        continue;
                    };
                    if cmd.windows(needle.len()).any(|w| w == needle) {
                        let shown = String::from_utf8_lossy(&cmd).replace('\0', " ");
                        keep.lock()
                            .unwrap()
                            .push(format!("pid {}: {shown}", entry.file_name().display()));
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        CmdlineWatch { hits, task }
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

impl Drop for CmdlineWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Every file under `dir`, recursively.
pub(super) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// `session/new` with `server` in the workspace, then one prompt; the prompt's response.
async fn turn_with_server(live: &mut Live, server: McpServer, text: &str) -> PromptResponse {
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let session = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![server]))
                .block_task()
                .await?;
            tokio::time::timeout(TURN_LIMIT, prompt(&cx, &session.session_id, text))
                .await
                .unwrap()
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

#[tokio::test]
async fn mcp_env_secrets_reach_the_server_but_no_command_line_transcript_or_log() {
    use std::os::unix::fs::PermissionsExt as _;
    let secret = unique_secret("ghp-env-secret");
    let transcripts = tempfile::tempdir().unwrap();
    let transcript_dir = transcripts.path().display().to_string();
    // Debug logs include Codex's command line: the secret must not be in it.
    let env = [("RUST_LOG".to_owned(), "debug".to_owned())];
    let mut live = Live::start_with(mock_config(), &["--transcript-dir", &transcript_dir], &env);
    let updates = live.updates.clone();
    let server = McpServer::Stdio(
        McpServerStdio::new("mockmcp", playback_bin())
            .args(vec!["mcp-echo".into()])
            .env(vec![EnvVariable::new("ECHO_TOKEN", &secret)]),
    );
    let watch = CmdlineWatch::start(&secret);
    let done = turn_with_server(&mut live, server, "scenario:mcp_env").await;
    assert_end_turn(&done.stop_reason);
    let seen = watch.hits();
    drop(watch);

    // The server got the value under the name the client gave.
    let all = updates.json();
    let delivered = format!("ECHO_TOKEN={secret}");
    assert!(
        all.iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u.to_string().contains(&delivered)),
        "the MCP server did not receive ECHO_TOKEN: {all:?}\n{}",
        live.acplb.stderr()
    );
    // No process ever had it on its command line.
    assert!(seen.is_empty(), "the secret was on a command line: {seen:?}");
    // The model's own commands do not see it either.
    let env_call = updates
        .of_kind("tool_call")
        .into_iter()
        .find(|c| c["title"] == "env")
        .expect("the `env` command ran");
    let env_output: Vec<String> = updates
        .of_kind("tool_call_update")
        .into_iter()
        .filter(|u| u["toolCallId"] == env_call["toolCallId"])
        .map(|u| u.to_string())
        .collect();
    assert!(env_output.iter().any(|o| o.contains("PATH=")), "{env_output:?}");
    assert!(
        !env_output.iter().any(|o| o.contains(&secret)),
        "a model command can read the secret: {env_output:?}"
    );
    // Transcripts: private, and without it (the tool result is in Codex's stdout).
    let files = files_under(transcripts.path());
    assert!(!files.is_empty(), "no transcript written");
    let mut redacted = false;
    for file in files {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is mode {mode:o}", file.display());
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains(&secret),
            "{} holds the secret:\n{text}",
            file.display()
        );
        // The turn's file holds the tool result (app-server also writes one per process).
        redacted |= text.contains("[REDACTED]");
    }
    assert!(redacted, "the tool result was redacted, not dropped");
    assert!(!live.acplb.stderr().contains(&secret), "the log holds the secret");
}

/// Accepts connections on 127.0.0.1 and keeps the headers of every HTTP request.
async fn header_catcher() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let keep = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                keep.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf).into_owned());
                let reply = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
                // Codex only needs to have sent its headers; whether it reads this is its business.
                stream.write_all(reply).await.ok();
            });
        }
    });
    (port, heads)
}

#[tokio::test]
async fn mcp_header_secrets_reach_the_server_but_no_command_line() {
    let secret = unique_secret("bearer-secret");
    let (port, heads) = header_catcher().await;
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    let server = McpServer::Http(
        McpServerHttp::new("remote", format!("http://127.0.0.1:{port}/mcp"))
            .headers(vec![HttpHeader::new("Authorization", format!("Bearer {secret}"))]),
    );
    let watch = CmdlineWatch::start(&secret);
    let done = turn_with_server(&mut live, server, "scenario:plain hi").await;
    assert_end_turn(&done.stop_reason);
    let seen = watch.hits();
    drop(watch);
    let heads = heads.lock().unwrap().clone();
    let wanted = format!("authorization: bearer {}", secret.to_lowercase());
    assert!(
        heads.iter().any(|h| h.to_lowercase().contains(&wanted)),
        "Codex did not send the header to the MCP server: {heads:?}"
    );
    assert!(seen.is_empty(), "the secret was on a command line: {seen:?}");
}

#[tokio::test]
async fn url_credentials_reach_the_server_as_a_header_but_no_command_line() {
    let secret = unique_secret("url-password");
    let (port, heads) = header_catcher().await;
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let with_userinfo = McpServer::Http(McpServerHttp::new(
        "remote",
        format!("http://alice:{secret}@127.0.0.1:{port}/mcp"),
    ));
    let with_token = McpServer::Http(McpServerHttp::new(
        "tokened",
        format!("http://127.0.0.1:{port}/mcp?token={secret}"),
    ));
    let watch = CmdlineWatch::start(&secret);
    let (done, refused) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let ok = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![with_userinfo]))
                .block_task()
                .await?;
            let done = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &ok.session_id, "scenario:plain hi"))
                .await
                .unwrap()?;
            let bad = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![with_token]))
                .block_task()
                .await?;
            let refused = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &bad.session_id, "scenario:plain hi"))
                .await
                .unwrap();
            Ok((done, refused))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_end_turn(&done.stop_reason);
    let seen = watch.hits();
    drop(watch);
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("alice:{secret}"));
    let heads = heads.lock().unwrap().clone();
    assert!(
        heads.iter().any(|h| h.contains(&basic)),
        "the URL's user and password did not reach the server as Basic auth: {heads:?}"
    );
    assert!(seen.is_empty(), "the secret was on a command line: {seen:?}");
    let refused = refused.expect_err("a token in the query cannot be passed safely");
    assert!(
        refused.message.contains("query parameter `token`") && refused.message.contains("as a header"),
        "{}",
        refused.message
    );
    assert!(!refused.message.contains(&secret), "{}", refused.message);
}

#[tokio::test]
async fn a_turn_past_the_time_limit_is_stopped_with_a_clear_error() {
    let mut live = Live::start_with(MockConfig::default(), &["--turn-timeout", "2s"], &[]);
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let (first, took, left, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let started = Instant::now();
            // `sleep 30` never finishes within the 2 s limit.
            let first = tokio::time::timeout(TURN_LIMIT, prompt(&cx, &s.session_id, "scenario:sleep wait"))
                .await
                .unwrap();
            let took = started.elapsed();
            // acplb carries the same CODEX_HOME (Codex inherits it) and is still running.
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            let next = prompt(&cx, &s.session_id, "scenario:plain still there?").await?;
            Ok((first, took, left, next))
        })
        .await
        .unwrap();
    let err = first.expect_err("the turn must fail at the limit");
    assert!(
        err.message.contains("time limit of 2s") && err.message.contains("--turn-timeout"),
        "{err:?}"
    );
    let data = err.data.as_ref().unwrap();
    assert_eq!(data["reason"], "turn_timeout", "{err:?}");
    assert_eq!(data["limitSeconds"], 2.0, "{err:?}");
    assert!(
        took >= Duration::from_secs(2),
        "stopped before the limit: {took:?}"
    );
    assert!(
        took < Duration::from_secs(15),
        "stopped long after the limit: {took:?}"
    );
    // What ran was shown, then closed as failed.
    assert!(
        updates.closed_as_failed("sleep 30"),
        "the sleep 30 tool call was shown, then closed as failed"
    );
    assert!(
        left.is_empty(),
        "codex processes left after the timeout: {left:?}"
    );
    assert_eq!(next.stop_reason, StopReason::EndTurn);
}

/// A stand-in Codex: a script that prints to stderr and exits 3.
fn crashing_codex(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("codex");
    std::fs::write(
        &path,
        "#!/bin/sh\necho 'starting up' >&2\necho 'panic: the stand-in crashed on purpose' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn a_crashing_codex_is_explained_in_the_error_message() {
    let dir = tempfile::tempdir().unwrap();
    let codex = crashing_codex(dir.path());
    let env = [("ACPLB_CODEX".to_owned(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(&[], &env, dir.path());
    let result = acplb.hello(dir.path()).await;
    let err = result.expect_err("the crash fails the prompt");
    assert_ne!(err.message, "Internal error");
    assert!(
        err.message.contains("exit status: 3") && err.message.contains("the stand-in crashed on purpose"),
        "{err:?}"
    );
    let data = err.data.as_ref().unwrap();
    assert_eq!(data["reason"], "provider_exited", "{err:?}");
    assert_eq!(data["exitStatus"], "exit status: 3", "{err:?}");
}

#[tokio::test]
async fn a_deleted_workspace_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let codex = crashing_codex(dir.path());
    let env = [("ACPLB_CODEX".to_owned(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(&[], &env, dir.path());
    let ws = dir.path().join("workspace");
    std::fs::create_dir(&ws).unwrap();
    let (first, second) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            std::fs::remove_dir(&ws).unwrap();
            let first = prompt(&cx, &s.session_id, "hello").await;
            // acplb keeps serving: a session in an existing directory still works up to Codex.
            let (_, other) = open_session(&cx, dir.path()).await?;
            let second = prompt(&cx, &other.session_id, "hello").await;
            Ok((first, second))
        })
        .await
        .unwrap();
    let err = first.expect_err("no Codex can start in a deleted directory");
    assert!(
        err.message.contains(&ws.display().to_string()) && err.message.contains("working directory"),
        "{err:?}"
    );
    let other = second.expect_err("the stand-in crashes");
    assert!(other.message.contains("exit status: 3"), "{other:?}");
    assert!(
        eventually(Duration::from_secs(5), || acplb.stderr().contains("is gone")).await,
        "the log says why: {}",
        acplb.stderr()
    );
}
