//! Backpressure under floods: Codex sending very large messages to a client that stops reading
//! (on both transports), and Codex flooding approval requests: acplb's memory stays bounded
//! by bytes, not by a number of messages, and nothing is lost.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, NewSessionRequest, PromptRequest, StopReason,
};

use super::stand_in::NO_APP_SERVER;
use super::wire::{Raw, peak_rss};
use crate::harness::{Acplb, Answer, Updates, eventually};

/// Codex messages of 512 KiB, 60 of them: 30 MiB, far fewer messages than the 128 acplb lets
/// wait for the client, but far more bytes than the `--output-buffer` of 2 MiB the tests set
/// (the default, 64 MiB, behaves the same, only slower to show).
const SIZE: usize = 512 << 10;
const COUNT: usize = 60;
const BUFFER_MIB: &str = "2";
/// How much acplb may grow meanwhile: the 2 MiB it lets wait, a few copies of the message in
/// hand, and room for the allocator.
const GROWTH: u64 = 16 << 20;

fn executable(path: &Path, script: &str) {
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A stand-in for `codex exec --json` that prints `line` (a file holding one event) `count`
/// times between the start and the end of a turn, then touches `done`.
fn big_exec(dir: &Path, line: &Path, count: usize, done: &Path) -> PathBuf {
    let path = dir.join("codex");
    executable(
        &path,
        &format!(
            "#!/bin/sh\n{NO_APP_SERVER}\n\
             echo '{{\"type\":\"thread.started\",\"thread_id\":\"0199a213-81c0-7800-8aa1-bbab2a035a53\"}}'\n\
             echo '{{\"type\":\"turn.started\"}}'\n\
             for i in $(seq {count}); do cat '{line}'; done\n\
             echo '{{\"type\":\"turn.completed\",\"usage\":{{\"input_tokens\":1,\"cached_input_tokens\":0,\"output_tokens\":1}}}}'\n\
             touch '{done}'\n",
            line = line.display(),
            done = done.display()
        ),
    );
    path
}

/// The start of a stand-in for `codex app-server`: answers the handshake, `thread/start` and
/// `turn/start` (thread `th-1`, turn `tu-1`).
const APP_SERVER_HANDSHAKE: &str = r#"#!/bin/sh
id() { sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
next() { while read -r l; do case "$l" in *'"method":"model/list"'*|*'"method":"skills/list"'*|*'"method":"permissionProfile/list"'*) echo "{\"id\":$(echo "$l" | id),\"error\":{\"code\":-32601,\"message\":\"no model/list here\"}}" ;; *) return 0 ;; esac; done; return 1; }
read -r l; i=$(echo "$l" | id); echo "{\"id\":$i,\"result\":{}}"
next
next; i=$(echo "$l" | id); echo "{\"id\":$i,\"result\":{\"thread\":{\"id\":\"th-1\"}}}"
next; i=$(echo "$l" | id); echo "{\"id\":$i,\"result\":{\"turn\":{\"id\":\"tu-1\"}}}"
"#;

const APP_SERVER_TURN_END: &str = r#"echo '{"method":"turn/completed","params":{"threadId":"th-1","turn":{"id":"tu-1","status":"completed"}}}'"#;

/// A stand-in for `codex app-server` that prints `line` (one message delta) `count` times in
/// its turn, ends it and touches `done`.
fn big_app_server(dir: &Path, line: &Path, count: usize, done: &Path) -> PathBuf {
    let path = dir.join("codex");
    executable(
        &path,
        &format!(
            "{APP_SERVER_HANDSHAKE}for i in $(seq {count}); do cat '{line}'; done\n{APP_SERVER_TURN_END}\ntouch '{done}'\nexec sleep 600\n",
            line = line.display(),
            done = done.display()
        ),
    );
    path
}

#[tokio::test]
async fn large_messages_to_a_client_that_stops_reading_are_bounded_by_bytes_on_exec() {
    let text = "x".repeat(SIZE);
    let line = format!(
        "{{\"type\":\"item.completed\",\"item\":{{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"{text}\"}}}}\n"
    );
    large_messages_at_a_client_that_stops_reading("exec", &line, big_exec).await;
}

#[tokio::test]
async fn large_messages_to_a_client_that_stops_reading_are_bounded_by_bytes_on_app_server() {
    let text = "x".repeat(SIZE);
    let line = format!(
        "{{\"method\":\"item/agentMessage/delta\",\"params\":{{\"threadId\":\"th-1\",\"turnId\":\"tu-1\",\"itemId\":\"m1\",\"delta\":\"{text}\"}}}}\n"
    );
    large_messages_at_a_client_that_stops_reading("app-server", &line, big_app_server).await;
}

/// Codex says [`COUNT`] messages of [`SIZE`] bytes to a client that reads nothing for a while:
/// acplb grows by less than [`GROWTH`] (a gate of 128 messages would let all 30 MiB wait),
/// Codex waits, and every message arrives in full once the client reads.
async fn large_messages_at_a_client_that_stops_reading(
    transport: &str,
    message: &str,
    stand_in: fn(&Path, &Path, usize, &Path) -> PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let line = dir.join("line");
    std::fs::write(&line, message).unwrap();
    let done = &dir.join("codex-finished");
    let codex = stand_in(dir, &line, COUNT, done);
    let env = vec![("ACPLB_CODEX".into(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(
        &["--transport", transport, "--output-buffer", BUFFER_MIB],
        &env,
        dir,
    );
    let mut raw = Raw::take(&mut acplb);
    assert_eq!(raw.initialize(1).await["id"], 1);
    let cwd = dir.display().to_string();
    raw.send(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{{\"cwd\":\"{cwd}\",\"mcpServers\":[]}}}}\n"
        )
        .as_bytes(),
    )
    .await;
    let id = raw.next().await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let pid = acplb.pid;
    let before = peak_rss(pid);
    raw.send(
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"{id}\",\"prompt\":[{{\"type\":\"text\",\"text\":\"flood\"}}]}}}}\n"
        )
        .as_bytes(),
    )
    .await;
    // The client reads nothing now; acplb must not take in what Codex has to say.
    let grew = eventually(Duration::from_secs(10), || {
        done.exists() || peak_rss(pid) > before + GROWTH
    })
    .await;
    assert!(
        !grew,
        "while the client read nothing, Codex finished ({}) or acplb grew by {} MiB",
        done.exists(),
        (peak_rss(pid) - before) >> 20
    );
    let mut chunks = 0;
    loop {
        let line = raw.next_line().await;
        if line.len() > SIZE {
            assert!(line.contains(r#""sessionUpdate":"agent_message_chunk""#));
            assert!(line.contains(&"x".repeat(SIZE)), "the message arrives in full");
            chunks += 1;
            continue;
        }
        let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
        if msg["id"] == 3 {
            assert_eq!(msg["result"]["stopReason"], "end_turn", "{msg}");
            break;
        }
    }
    assert_eq!(chunks, COUNT, "no message was lost");
    assert!(done.exists());
    let growth = peak_rss(pid) - before;
    assert!(growth < GROWTH, "acplb grew by {} MiB", growth >> 20);
}

/// A stand-in for `codex app-server` that asks for approval `asks` times in its turn without
/// waiting, then waits for every answer (kept in `answers`), ends the turn and touches `done`.
fn asking_app_server(dir: &Path, asks: usize, answers: &Path, done: &Path) -> PathBuf {
    let codex = dir.join("codex");
    executable(
        &codex,
        &format!(
            "{APP_SERVER_HANDSHAKE}seq 1000 {last} | awk '{{ printf \"{{\\\"id\\\":%d,\\\"method\\\":\\\"item/commandExecution/requestApproval\\\",\\\"params\\\":{{\\\"threadId\\\":\\\"th-1\\\",\\\"turnId\\\":\\\"tu-1\\\",\\\"itemId\\\":\\\"c%d\\\",\\\"command\\\":\\\"touch flood\\\",\\\"cwd\\\":\\\"/tmp\\\",\\\"reason\\\":\\\"one more\\\"}}}}\\n\", $1, $1 }}'\n\
             head -n {asks} > '{answers}'\n\
             {APP_SERVER_TURN_END}\ntouch '{done}'\nexec sleep 600\n",
            last = 1000 + asks - 1,
            answers = answers.display(),
            done = done.display()
        ),
    );
    codex
}

/// Codex asks for approval 5,000 times without waiting; the client answers each at once.
/// The asks wait for the client like updates do, so acplb's memory stays flat, and every ask
/// is answered to Codex.
#[tokio::test]
async fn an_approval_flood_is_paced_by_the_client_and_costs_no_memory_per_request() {
    const ASKS: usize = 5_000;
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("codex-finished");
    let answers = dir.path().join("answers");
    let codex = asking_app_server(dir.path(), ASKS, &answers, &done);
    let env = vec![("ACPLB_CODEX".into(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(&["--transport", "app-server"], &env, dir.path());
    let cwd = dir.path().to_owned();
    let pid = acplb.pid;
    let (response, growth) = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
            let before = peak_rss(pid);
            let response = cx
                .send_request(PromptRequest::new(s.session_id, vec!["flood".into()]))
                .block_task()
                .await?;
            Ok((response, peak_rss(pid) - before))
        })
        .await
        .expect("the turn ends");
    assert_eq!(response.stop_reason, StopReason::EndTurn);
    assert_eq!(
        acplb.permissions.seen().len(),
        ASKS,
        "every ask reached the client"
    );
    let answered = std::fs::read_to_string(&answers).unwrap();
    assert_eq!(answered.lines().count(), ASKS);
    assert!(
        answered.lines().all(|l| l.contains(r#""decision":"accept""#)),
        "every ask got the client's answer"
    );
    // The first turn itself costs some 17 MiB in a debug build, whatever the number of asks;
    // before the asks waited for the client, these 5,000 cost 50 MiB more.
    assert!(
        growth < 32 << 20,
        "{ASKS} approval requests cost {} MiB",
        growth >> 20
    );
}

/// A client that reads every ask but answers none: acplb stops taking Codex's messages once
/// 64 asks wait, instead of holding thousands; a cancel still ends the turn at once, and
/// Codex hears a refusal for each ask.
#[tokio::test]
async fn asks_the_client_leaves_unanswered_stop_at_a_bound_and_cancel_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("codex-finished");
    let answers = dir.path().join("answers");
    let codex = asking_app_server(dir.path(), 5_000, &answers, &done);
    let env = vec![("ACPLB_CODEX".into(), codex.display().to_string())];
    let mut acplb = Acplb::spawn(&["--transport", "app-server"], &env, dir.path());
    acplb.permissions.answer(Answer::Never);
    let permissions = acplb.permissions.clone();
    let cwd = dir.path().to_owned();
    let (response, seen_for_a_while) = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
            let prompt = cx
                .send_request(PromptRequest::new(s.session_id.clone(), vec!["flood".into()]))
                .block_task();
            let prompt = tokio::spawn(prompt);
            assert!(
                eventually(Duration::from_secs(20), || permissions.seen().len() >= 64).await,
                "the first asks reach the client"
            );
            // Held for a while: no more asks arrive while 64 wait.
            let more = eventually(Duration::from_secs(2), || permissions.seen().len() > 64).await;
            cx.send_notification(CancelNotification::new(s.session_id))?;
            let response = tokio::time::timeout(Duration::from_secs(10), prompt)
                .await
                .expect("a cancel ends the turn")
                .expect("the prompt task")?;
            Ok((response, !more))
        })
        .await
        .unwrap();
    assert!(
        seen_for_a_while,
        "{} asks reached a client that answered none",
        acplb.permissions.seen().len()
    );
    assert_eq!(response.stop_reason, StopReason::Cancelled);
}
