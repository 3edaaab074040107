//! `cargo bench --bench mcp`: what `acplb mcp codex` adds per call to the same turn through
//! `acplb serve` (a `codex` tool call = `session/new` + `session/prompt` in process; measured
//! against those two requests over stdio), with the real Codex CLI against the mock model,
//! interleaved runs and medians; and the MCP server's own peak RSS (`VmHWM`, Codex excluded).
//! Runs on the transport `ACPLB_TRANSPORT` selects (app-server by default).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a bench prints and fails loudly"
)]

use std::time::{Duration, Instant};

use serde_json::json;

#[path = "support/peer.rs"]
mod peer;

use peer::{Peer, median};

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("ACPLB_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let Some((_mock, env, vars)) = peer::live("mcp codex per call") else {
        return;
    };
    // Each server its own state directory: no registry lock shared between them.
    let (state, mcp_state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ws = env.workspace();
    let retries = ["-c", "features.unbounded_connection_retries=false"];
    let mut acp = Peer::spawn(&vars, &retries, state.path());
    acp.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    let mut mcp = Peer::spawn(&vars, &[retries[0], retries[1], "mcp", "codex"], mcp_state.path());
    mcp.call(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}),
    );
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let prompt = "scenario:plain hi";
    let via_serve = |p: &mut Peer| {
        let t = Instant::now();
        let session = p.call("session/new", json!({"cwd": ws, "mcpServers": []}));
        let r = p.call(
            "session/prompt",
            json!({"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": prompt}]}),
        );
        assert_eq!(r["stopReason"], "end_turn");
        t.elapsed()
    };
    let via_mcp = |p: &mut Peer| {
        let t = Instant::now();
        let r = p.call(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": prompt, "cwd": ws}}),
        );
        assert_eq!(r["isError"], false, "{r}");
        t.elapsed()
    };
    // Warm-up (each starts its app-server), then interleave so load affects both alike.
    via_serve(&mut acp);
    via_mcp(&mut mcp);
    let (mut serve, mut tool) = (Vec::new(), Vec::new());
    for i in 0..runs {
        // Alternating which goes first, so neither always follows the other's clean-up.
        if i % 2 == 0 {
            serve.push(via_serve(&mut acp));
            tool.push(via_mcp(&mut mcp));
        } else {
            tool.push(via_mcp(&mut mcp));
            serve.push(via_serve(&mut acp));
        }
    }
    // Each pair ran back to back, so its difference is the least disturbed by load that comes
    // and goes on a shared machine; its median is the figure the budget is checked against.
    let paired: Vec<f64> = serve
        .iter()
        .zip(&tool)
        .map(|(s, t)| millis(*t) - millis(*s))
        .collect();
    let (s, m) = (median(serve), median(tool));
    println!(
        "turn via acplb serve (session/new + prompt): median {:.2} ms (n={runs})",
        millis(s)
    );
    println!(
        "same turn via acplb mcp codex (tools/call): median {:.2} ms (n={runs})",
        millis(m)
    );
    println!(
        "added per call by the MCP face:             {:+.2} ms (difference of medians)",
        millis(m) - millis(s)
    );
    println!(
        "added per call, median of paired differences: {:+.2} ms",
        median_f64(paired)
    );
    println!(
        "acplb mcp codex peak RSS (VmHWM):           {} KiB",
        mcp.peak_rss_kib()
    );
    println!(
        "acplb serve peak RSS (VmHWM):               {} KiB",
        acp.peak_rss_kib()
    );
    acp.close();
    mcp.close();
}
