//! The editor's wire under abuse: bytes that are not UTF-8, a line of any length, and a client
//! that stops reading while Codex floods its output.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use super::stand_in::NO_APP_SERVER;
use crate::harness::{Acplb, eventually};

/// A client that speaks raw JSON lines, so it can send what no SDK would.
pub(super) struct Raw {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Raw {
    pub(super) fn take(acplb: &mut Acplb) -> Raw {
        Raw {
            stdin: acplb.child.stdin.take().unwrap(),
            lines: BufReader::new(acplb.child.stdout.take().unwrap()).lines(),
        }
    }

    pub(super) async fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
    }

    /// The next line as it came, not parsed.
    pub(super) async fn next_line(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("acplb answers")
            .unwrap()
            .expect("acplb's stdout is open")
    }

    pub(super) async fn next(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("acplb answers")
            .unwrap()
            .expect("acplb's stdout is open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:.200} ({e})"))
    }

    pub(super) async fn initialize(&mut self, id: u64) -> serde_json::Value {
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":1}}}}"#
        );
        self.send(format!("{req}\n").as_bytes()).await;
        self.next().await
    }
}

/// Peak resident memory of `pid` (`VmHWM`), in bytes.
pub(super) fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

fn no_codex() -> Vec<(String, String)> {
    vec![("ACPLB_CODEX".into(), "/nonexistent/codex".into())]
}

#[tokio::test]
async fn invalid_utf8_gets_a_parse_error_and_acplb_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &no_codex(), dir.path());
    let mut raw = Raw::take(&mut acplb);
    assert_eq!(raw.initialize(1).await["id"], 1);
    // A request with a stray byte inside a string, then pure garbage bytes.
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"x\":\"\xff\"}}\n")
        .await;
    raw.send(b"\xc3\x28\x80\x80\xfe\n").await;
    for line in [2, 3] {
        let err = raw.next().await;
        assert_eq!(err["error"]["code"], -32700, "{err}");
        let message = err["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("line {line} is not valid UTF-8")),
            "{message}"
        );
    }
    let again = raw.initialize(4).await;
    assert_eq!(again["id"], 4, "acplb still serves after bad bytes: {again}");
    drop(raw);
    assert_eq!(acplb.wait_exit(Duration::from_secs(5)).await.0, Some(0));
}

#[tokio::test]
async fn an_over_long_line_is_refused_without_holding_it_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &no_codex(), dir.path());
    let mut raw = Raw::take(&mut acplb);
    assert_eq!(raw.initialize(1).await["id"], 1);
    // 160 MiB in one line: over the 64 MiB limit, sent in chunks as a real client would.
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..160 {
        raw.send(&chunk).await;
    }
    raw.send(b"\n").await;
    let err = raw.next().await;
    assert_eq!(err["error"]["code"], -32700, "{err}");
    let message = err["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("has {} bytes, more than acplb accepts", 160 << 20)),
        "{message}"
    );
    assert_eq!(raw.initialize(2).await["id"], 2, "acplb still serves");
    let peak = peak_rss(acplb.pid);
    assert!(
        peak < 128 << 20,
        "a refused 160 MiB line cost {} MiB of memory",
        peak >> 20
    );
}

/// A stand-in for `codex exec --json` that floods stdout with `count` agent messages of
/// `size` bytes, then ends the turn and touches `done`.
fn flooding_codex(dir: &Path, count: usize, size: usize, done: &Path) -> std::path::PathBuf {
    let path = dir.join("codex");
    let text = "x".repeat(size);
    let script = format!(
        "#!/bin/sh\n{NO_APP_SERVER}\n\
         echo '{{\"type\":\"thread.started\",\"thread_id\":\"0199a213-81c0-7800-8aa1-bbab2a035a53\"}}'\n\
         echo '{{\"type\":\"turn.started\"}}'\n\
         yes '{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"{text}\"}}}}' | head -n {count}\n\
         echo '{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"cached_input_tokens\":0,\"output_tokens\":1}}}}'\n\
         touch '{}'\n",
        done.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// A stand-in for `codex app-server`: answers the handshake, `thread/start` and `turn/start`,
/// then floods `count` message deltas of `size` bytes, ends the turn and touches `done`.
fn flooding_app_server(dir: &Path, count: usize, size: usize, done: &Path) -> std::path::PathBuf {
    let path = dir.join("codex");
    let text = "x".repeat(size);
    let script = format!(
        r#"#!/bin/sh
id() {{ sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }}
next() {{ while read -r l; do case "$l" in *'"method":"model/list"'*|*'"method":"skills/list"'*|*'"method":"permissionProfile/list"'*) echo "{{\"id\":$(echo "$l" | id),\"error\":{{\"code\":-32601,\"message\":\"no model/list here\"}}}}" ;; *) return 0 ;; esac; done; return 1; }}
read -r l; i=$(echo "$l" | id); echo "{{\"id\":$i,\"result\":{{}}}}"
next
next; i=$(echo "$l" | id); echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"th-1\"}}}}}}"
next; i=$(echo "$l" | id); echo "{{\"id\":$i,\"result\":{{\"turn\":{{\"id\":\"tu-1\"}}}}}}"
yes '{{"method":"item/agentMessage/delta","params":{{"threadId":"th-1","turnId":"tu-1","itemId":"m1","delta":"{text}"}}}}' | head -n {count}
echo '{{"method":"turn/completed","params":{{"threadId":"th-1","turn":{{"id":"tu-1","status":"completed"}}}}}}'
touch '{}'
exec sleep 600
"#,
        done.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn a_client_that_stops_reading_pauses_codex_instead_of_filling_memory() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("codex-finished");
    let (count, size) = (5000, 40_000);
    let codex = flooding_codex(dir.path(), count, size, &done);
    flood_at_a_client_that_stops_reading(dir.path(), &codex, "exec", count, size, &done).await;
}

#[tokio::test]
async fn a_client_that_stops_reading_pauses_the_shared_app_server() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("codex-finished");
    let (count, size) = (5000, 40_000);
    let codex = flooding_app_server(dir.path(), count, size, &done);
    flood_at_a_client_that_stops_reading(dir.path(), &codex, "app-server", count, size, &done).await;
}

/// Codex floods `count` messages of `size` bytes at a client that reads nothing for a while:
/// acplb's memory stays bounded, Codex waits, and every message arrives once the client reads.
async fn flood_at_a_client_that_stops_reading(
    dir: &Path,
    codex: &Path,
    transport: &str,
    count: usize,
    size: usize,
    done: &Path,
) {
    let env = vec![("ACPLB_CODEX".into(), codex.display().to_string())];
    // The stand-in speaks `codex exec --json`; the same on app-server is
    // `a_client_that_stops_reading_pauses_the_shared_app_server`.
    let mut acplb = Acplb::spawn(&["--transport", transport], &env, dir);
    let mut raw = Raw::take(&mut acplb);
    assert_eq!(raw.initialize(1).await["id"], 1);
    let cwd = dir.display().to_string();
    raw.send(
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{cwd}","mcpServers":[]}}}}"#
        )
        .as_bytes(),
    )
    .await;
    raw.send(b"\n").await;
    let session = raw.next().await;
    let id = session["result"]["sessionId"].as_str().unwrap().to_owned();
    raw.send(
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{id}","prompt":[{{"type":"text","text":"flood"}}]}}}}"#
        )
        .as_bytes(),
    )
    .await;
    raw.send(b"\n").await;
    // The client reads nothing now. Codex has 200 MB to say; acplb must not take it all in.
    let pid = acplb.pid;
    let finished_early = eventually(Duration::from_secs(4), || {
        done.exists() || peak_rss(pid) > 100 << 20
    })
    .await;
    let peak = peak_rss(pid);
    assert!(
        !finished_early,
        "while the client read nothing, Codex finished its output ({}) or acplb grew to {} MiB",
        done.exists(),
        peak >> 20
    );
    // Reading again, the client gets every message, in full, then the end of the turn.
    let mut chunks = 0;
    let reply = loop {
        let msg = raw.next().await;
        if msg["id"] == 3 {
            break msg;
        }
        if msg["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            // Consecutive messages are separated by a blank line.
            assert_eq!(
                msg["params"]["update"]["content"]["text"]
                    .as_str()
                    .unwrap()
                    .trim()
                    .len(),
                size
            );
            chunks += 1;
        }
    };
    assert_eq!(reply["result"]["stopReason"], "end_turn", "{reply}");
    assert_eq!(chunks, count, "no message was lost");
    assert!(done.exists());
    assert!(peak_rss(pid) < 100 << 20, "peak {} MiB", peak_rss(pid) >> 20);
}

#[tokio::test]
async fn requests_the_sdk_refuses_are_explained_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut acplb = Acplb::spawn(&[], &no_codex(), dir.path());
    let mut raw = Raw::take(&mut acplb);
    assert_eq!(raw.initialize(1).await["id"], 1);
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{}}\n")
        .await;
    let missing = raw.next().await;
    assert_eq!(
        missing["error"]["message"], "Invalid params: missing field `cwd`",
        "{missing}"
    );
    assert_eq!(missing["error"]["data"]["reason"], "invalid_params", "{missing}");
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/fly\",\"params\":{}}\n")
        .await;
    let unknown = raw.next().await;
    assert_eq!(
        unknown["error"]["message"], "Method not found: acplb has no method `session/fly`",
        "{unknown}"
    );
    assert_eq!(
        unknown["error"]["data"]["reason"], "method_not_found",
        "{unknown}"
    );
    raw.send(b"{\"token\":\"hunter2\"\n").await;
    let parse = raw.next().await;
    let message = parse["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("Parse error: "), "{parse}");
    assert_eq!(parse["error"]["data"]["reason"], "parse_error", "{parse}");
    assert!(!message.contains("hunter2"), "the line is not echoed: {parse}");
    // Refusing them costs nothing much: the SDK's warning naming its whole handler chain (one
    // string of hundreds of MB) is never built.
    let peak = peak_rss(acplb.pid);
    assert!(
        peak < 64 << 20,
        "peak {} MiB after refusing three requests",
        peak >> 20
    );
}
