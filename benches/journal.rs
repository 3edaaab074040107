//! `cargo bench --bench journal`: what keeping sessions costs.
//!
//! - the hot path: one `Journal::update` per `session/update` (encode + one `write(2)`, no
//!   fsync), for a streamed text chunk and for a tool call's 2 KB output;
//! - `session/load` of a session with 10,000 updates, end to end on the real binary: launch,
//!   `initialize`, then `session/load` until its answer, every replayed update read by the
//!   client first (no Codex is involved: the thread is resumed at the first prompt);
//! - reading and replaying the same journal in process, without the wire;
//! - `session/list` over 1,000 kept sessions, end to end (request → first page answered).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acplb_core::sessions::journal::{self, DEFAULT_LIMIT, Journal};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");
const ID: &str = "5e5510a0-0000-4000-8000-000000010000";

fn chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
}

fn output(id: &str, bytes: usize) -> SessionUpdate {
    let text = format!("```\n{}\n```", "x".repeat(bytes));
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_owned(),
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Completed)
            .content(vec![ContentBlock::from(text).into()]),
    ))
}

/// A journal of `turns` turns of 10 updates each: 6 text chunks, a tool call, its output
/// (1 KB), 2 more chunks.
fn write_session(state: &Path, turns: u64) {
    let j = Journal::create(state, ID, Path::new("/tmp"), DEFAULT_LIMIT).unwrap();
    j.thread("019a0000-0000-7000-8000-000000000001");
    for t in 1..=turns {
        j.prompt(
            t,
            &[ContentBlock::from(format!("prompt {t}: please look at the code"))],
            false,
        );
        for _ in 0..6 {
            j.update(&chunk("Some streamed words of the answer, "));
        }
        let id = format!("call-{t}");
        j.update(&SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), "Run `cargo test`")
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::InProgress),
        ));
        j.update(&output(&id, 1024));
        j.update(&chunk("and the rest "));
        j.update(&chunk("of it."));
        j.turn_end(t, "end_turn", None);
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn report(name: &str, samples: Vec<Duration>) {
    let n = samples.len();
    println!("{name:<55} median {:>10.3?}  (n={n})", median(samples));
}

fn hot_path() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, Path::new("/tmp"), u64::MAX).unwrap();
    let text = chunk("Some streamed words of the answer, ");
    let out = output("call-1", 2048);
    for (name, update) in [
        ("journal: one streamed text chunk", &text),
        ("journal: one tool output (2 KB)", &out),
    ] {
        let mut samples = Vec::new();
        for _ in 0..50 {
            let start = Instant::now();
            for _ in 0..1000 {
                j.update(update);
            }
            samples.push(start.elapsed() / 1000);
        }
        report(&format!("{name}, per update"), samples);
    }
}

fn in_process_load() {
    let dir = tempfile::tempdir().unwrap();
    write_session(dir.path(), 1000);
    let mut samples = Vec::new();
    let mut count = 0;
    for _ in 0..20 {
        let start = Instant::now();
        let history = journal::read(dir.path(), ID).unwrap();
        count = journal::updates(&history, true, false).len();
        samples.push(start.elapsed());
    }
    report(&format!("read + replay in process ({count} updates)"), samples);
}

/// acplb on `state` (no Codex), `initialize` answered.
fn initialized(state: &Path) -> (std::process::Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(ACPLB)
        .env("ACPLB_STATE_DIR", state)
        .env("ACPLB_CODEX", "/nonexistent/codex")
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":1}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    (child, out)
}

/// Launch → `initialize` → `session/load` answered, counting the updates before the answer.
fn load_once(state: &Path, cwd: &Path) -> (Duration, Duration, usize) {
    let started = Instant::now();
    let (mut child, mut out) = initialized(state);
    let stdin = child.stdin.as_mut().unwrap();
    let mut line = String::new();
    let load_start = Instant::now();
    let load = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"session/load",
        "params":{"sessionId": ID, "cwd": cwd, "mcpServers": []}});
    writeln!(stdin, "{load}").unwrap();
    stdin.flush().unwrap();
    let mut updates = 0;
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "acplb closed stdout");
        if line.contains(r#""method":"session/update""#) {
            updates += 1;
        } else if line.contains(r#""id":1"#) {
            assert!(!line.contains(r#""error""#), "{line}");
            break;
        }
    }
    let loaded = load_start.elapsed();
    let total = started.elapsed();
    drop(child.stdin.take());
    child.wait().unwrap();
    (loaded, total, updates)
}

fn end_to_end_load() {
    let dir = tempfile::tempdir().unwrap();
    write_session(dir.path(), 1000);
    let cwd = tempfile::tempdir().unwrap();
    let mut loads = Vec::new();
    let mut totals = Vec::new();
    let mut count = 0;
    for _ in 0..15 {
        let (loaded, total, n) = load_once(dir.path(), cwd.path());
        loads.push(loaded);
        totals.push(total);
        count = n;
    }
    report(
        &format!("session/load request → answer ({count} updates replayed)"),
        loads,
    );
    report("launch → initialize → session/load answered", totals);
}

/// Writes 1,000 registry entries over 10 identities.
fn write_registry(state: &Path) {
    use acplb_core::sessions::registry::{Entry, Registry, registry_key};
    let registry = Registry::new(state);
    let start = std::time::SystemTime::now();
    for n in 0..1000u64 {
        let mut entry = Entry::new(format!("s-{n:04}"), "/tmp", start + Duration::from_millis(n));
        entry.identity = Some(format!("agent{}", n % 10));
        entry.team = Some("bench".into());
        entry.title = Some(format!("session {n}"));
        let key = registry_key(entry.identity.as_deref(), entry.team.as_deref());
        registry
            .update(&key, &entry.session_id.clone(), |_| Some(entry.clone()))
            .unwrap();
    }
}

fn end_to_end_list() {
    let dir = tempfile::tempdir().unwrap();
    write_registry(dir.path());
    let mut samples = Vec::new();
    let mut count = 0;
    for _ in 0..15 {
        let (mut child, mut out) = initialized(dir.path());
        let stdin = child.stdin.as_mut().unwrap();
        let mut line = String::new();
        let start = Instant::now();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"session/list","params":{{}}}}"#
        )
        .unwrap();
        stdin.flush().unwrap();
        line.clear();
        out.read_line(&mut line).unwrap();
        samples.push(start.elapsed());
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        count = v["result"]["sessions"].as_array().map_or(0, Vec::len);
        assert!(v["result"]["nextCursor"].is_string(), "{line}");
        drop(child.stdin.take());
        child.wait().unwrap();
    }
    report(
        &format!("session/list over 1,000 sessions (first page of {count})"),
        samples,
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    hot_path();
    in_process_load();
    end_to_end_load();
    end_to_end_list();
}
