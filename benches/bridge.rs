//! `cargo bench --bench bridge`: what acplb itself costs, measured on the real binary.
//!
//! - launch → `initialize` reply, and `session/new` round trips (no Codex involved);
//! - the time a turn takes through acplb (on the exec transport, whatever `ACPLB_TRANSPORT`
//!   says) minus the same `codex exec --json` run directly, with the real Codex CLI against the
//!   project's mock model (interleaved runs, medians);
//! - acplb's own peak RSS (`VmHWM`) after turns (Codex's process excluded: it is a child).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/peer.rs"]
mod peer;

use peer::{Peer as Bridge, median};

/// Sessions kept out of the user's state directory (and measured with their journal).
fn state() -> std::path::PathBuf {
    std::env::temp_dir().join("acplb-bench-bridge-state")
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn init_params() -> serde_json::Value {
    serde_json::json!({"protocolVersion": 1, "clientCapabilities": {}})
}

fn launch_and_session(runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![("ACPLB_CODEX".to_owned(), "/nonexistent/codex".to_owned())];
    let mut launch = Vec::new();
    let mut new = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let mut b = Bridge::spawn(&env, &[], &state());
        b.call("initialize", init_params());
        launch.push(start.elapsed());
        for _ in 0..5 {
            let t = Instant::now();
            b.call(
                "session/new",
                serde_json::json!({"cwd": dir.path(), "mcpServers": []}),
            );
            new.push(t.elapsed());
        }
        b.close();
    }
    println!(
        "launch -> initialize reply: median {} (n={runs})",
        ms(median(launch))
    );
    println!(
        "session/new round trip:     median {} (n={})",
        ms(median(new)),
        runs * 5
    );
}

fn turn_overhead(runs: usize) {
    let Some((_mock, env, mut vars)) = peer::live("turn overhead") else {
        return;
    };
    // The baseline is a direct `codex exec` run, so acplb runs the same: the exec transport.
    vars.push(("ACPLB_TRANSPORT".to_owned(), "exec".to_owned()));
    let args = ["-c", "features.unbounded_connection_retries=false"];
    let mut b = Bridge::spawn(&vars, &args, &state());
    b.call("initialize", init_params());
    let ws = env.workspace();
    // A fresh session per measured turn, so each is a first turn like the direct run.
    let prompt = |b: &mut Bridge| {
        let session = b.call("session/new", serde_json::json!({"cwd": ws, "mcpServers": []}));
        let sid = session["sessionId"].clone();
        let t = Instant::now();
        let r = b.call(
            "session/prompt",
            serde_json::json!({"sessionId": sid, "prompt": [{"type": "text", "text": "scenario:plain hi"}]}),
        );
        assert_eq!(r["stopReason"], "end_turn");
        t.elapsed()
    };
    // The same run acplb makes for a first turn, started directly.
    let direct = || {
        let t = Instant::now();
        let out = Command::new(env.codex_path())
            .args([
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-c",
                "features.unbounded_connection_retries=false",
            ])
            .args(["-c", "tools.update_plan.enabled=true", "-s", "read-only", "-C"])
            .arg(env.workspace())
            .args(["--", "-"])
            .envs(vars.iter().map(|(k, v)| (k, v)))
            .current_dir(env.workspace())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .and_then(|mut c| {
                c.stdin.take().unwrap().write_all(b"scenario:plain hi")?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success());
        t.elapsed()
    };
    // Warm-up, then interleave so machine load affects both alike.
    prompt(&mut b);
    direct();
    let (mut via, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        via.push(prompt(&mut b));
        raw.push(direct());
    }
    let (v, r) = (median(via), median(raw));
    println!(
        "turn via acplb:             median {} (n={runs}, each a first turn)",
        ms(v)
    );
    println!("same codex exec directly:   median {} (n={runs})", ms(r));
    println!(
        "added per turn:             {:+.2} ms (difference of medians)",
        (v.as_secs_f64() - r.as_secs_f64()) * 1000.0
    );
    println!("acplb peak RSS after turns: {} KiB", b.peak_rss_kib());
    b.close();
}

/// acplb's own cost per turn, without Codex's noise: a stand-in that prints a plain turn at
/// once, run through acplb and directly.
fn overhead_with_instant_codex(runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("codex");
    let transcript = concat!(
        r#"{"type":"thread.started","thread_id":"01a2012d-270c-76f1-a1ec-295a87e25664"}"#,
        "\n",
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Answering**\n\nReply briefly."}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Hello! 2 + 2 = 4."}}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":48,"reasoning_output_tokens":16}}"#,
        "\n",
    );
    std::fs::write(dir.path().join("turn.jsonl"), transcript).unwrap();
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncat >/dev/null\ncat '{}'\n",
            dir.path().join("turn.jsonl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let env = vec![("ACPLB_CODEX".to_owned(), fake.display().to_string())];
    let mut b = Bridge::spawn(&env, &[], &state());
    b.call("initialize", init_params());
    let session = b.call(
        "session/new",
        serde_json::json!({"cwd": dir.path(), "mcpServers": []}),
    );
    let sid = session["sessionId"].clone();
    let mut via = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let r = b.call(
            "session/prompt",
            serde_json::json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
        );
        assert_eq!(r["stopReason"], "end_turn");
        via.push(t.elapsed());
        let t = Instant::now();
        let mut c = Command::new(&fake)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(b"hi").unwrap();
        assert!(c.wait_with_output().unwrap().status.success());
        raw.push(t.elapsed());
    }
    let (v, r) = (median(via), median(raw));
    println!("instant stand-in via acplb: median {} (n={runs})", ms(v));
    println!("instant stand-in directly:  median {} (n={runs})", ms(r));
    println!(
        "acplb's own cost per turn:  {:+.2} ms",
        (v.as_secs_f64() - r.as_secs_f64()) * 1000.0
    );
    b.close();
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once quickly.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs = if quick { 2 } else { 21 };
    launch_and_session(runs);
    overhead_with_instant_codex(if quick { 2 } else { 101 });
    turn_overhead(if quick { 1 } else { 15 });
}
