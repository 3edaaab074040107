//! Throughput of the decoder on synthetic `codex exec --json` output built from real item shapes.
//!
//! Run with `cargo bench -p acplb-codex --bench decode`. The input is about 64 MB of JSONL mixing
//! messages, reasoning, commands with small to large outputs, file changes, MCP calls, web
//! searches (with their duplicate `id` key) and to-do lists; throughput is reported in bytes.

use std::hint::black_box;
use std::path::Path;

use acplb_codex::exec::decode::{Decoder, DecoderOptions, FileTexts, OldText};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

const TARGET_BYTES: usize = 64 * 1024 * 1024;

struct Texts;

impl FileTexts for Texts {
    fn before(&mut self, _path: &Path) -> OldText {
        OldText::Known("fn main() {}\n".to_owned())
    }

    fn after(&mut self, _path: &Path) -> Option<String> {
        Some("fn main() {\n    println!(\"hi\");\n}\n".to_owned())
    }
}

/// Command output like `ls -la` / `cargo test` produce: many short lines, quotes, tabs.
fn output(bytes: usize) -> String {
    let line = "-rw-r--r-- 1 root root   12 Nov 22 02:54 \"src/main.rs\"\ttest result: ok. 12 passed\n";
    line.repeat(bytes / line.len() + 1)
}

#[allow(
    clippy::needless_pass_by_value,
    reason = "call sites pass `json!` temporaries"
)]
fn item(event: &str, item: serde_json::Value) -> String {
    json!({ "type": event, "item": item }).to_string()
}

fn turn(n: usize, sizes: [usize; 5], lines: &mut Vec<String>) {
    let id = |k: usize| format!("item_{k}");
    lines.push(
        json!({"type": "thread.started", "thread_id": "01a2012d-28c4-7112-9c5f-0f1653f3ec26"}).to_string(),
    );
    lines.push(r#"{"type":"turn.started"}"#.to_owned());
    lines.push(item("item.completed", json!({"id": id(0), "type": "reasoning",
        "text": "**Listing files**\n\nRun ls to inspect the repo, then read `main.rs` and decide what to change."})));
    lines.push(item(
        "item.completed",
        json!({"id": id(1), "type": "agent_message",
        "text": "I'll list the files first, then look at the failing test and fix it. ".repeat(4)}),
    ));
    for (k, size) in sizes.into_iter().enumerate() {
        let command = [
            "/bin/bash -lc 'ls -la'",
            "/bin/bash -lc 'cargo test'",
            "/bin/bash -lc 'rg -n fn src'",
            "/bin/bash -lc 'cat src/main.rs'",
            "/bin/bash -lc 'sed -n '\\''1,200p'\\'' src/lib.rs'",
        ][k];
        let item_id = id(2 + k);
        lines.push(item(
            "item.started",
            json!({"id": item_id, "type": "command_execution", "command": command,
            "aggregated_output": "", "exit_code": null, "status": "in_progress"}),
        ));
        lines.push(item("item.completed", json!({"id": item_id, "type": "command_execution", "command": command,
            "aggregated_output": output(size), "exit_code": (n + k) % 3, "status": if (n + k).is_multiple_of(3) { "completed" } else { "failed" }})));
    }
    let change = json!({"id": id(7), "type": "file_change", "status": "in_progress", "changes": [
        {"path": "/workspace/src/main.rs", "kind": "update"}, {"path": "/workspace/hello.txt", "kind": "add"}]});
    lines.push(item("item.started", change.clone()));
    let mut done = change;
    done["status"] = json!("completed");
    lines.push(item("item.completed", done));
    lines.push(item("item.completed", json!({"id": id(8), "type": "mcp_tool_call", "server": "mockmcp", "tool": "echo",
        "arguments": {"text": "ping"}, "error": null, "status": "completed",
        "result": {"content": [{"type": "text", "text": "echo: ping ".repeat(50)}], "structured_content": {"echoed": "ping"}}})));
    lines.push(format!(
        r#"{{"type":"item.completed","item":{{"id":"{}","type":"web_search","id":"ws_{n}","query":"agent client protocol","action":{{"type":"search","query":"agent client protocol"}}}}}}"#,
        id(9)
    ));
    lines.push(item(
        "item.updated",
        json!({"id": id(10), "type": "todo_list", "items": [
        {"text": "Inspect repo", "completed": true}, {"text": "Fix the test", "completed": false},
        {"text": "Report back", "completed": false}]}),
    ));
    lines.push(r#"{"type":"turn.completed","usage":{"input_tokens":2400,"cached_input_tokens":400,"cache_write_input_tokens":0,"output_tokens":96,"reasoning_output_tokens":32}}"#.to_owned());
}

/// Command output sizes of one synthetic turn: a realistic mix, and small items only (where the
/// per-line cost dominates).
const MIXED: [usize; 5] = [200, 2_000, 16_000, 100_000, 600];
const SMALL: [usize; 5] = [100, 300, 500, 200, 100];

fn input(sizes: [usize; 5]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut bytes = 0;
    let mut n = 0;
    while bytes < TARGET_BYTES {
        let start = lines.len();
        turn(n, sizes, &mut lines);
        bytes += lines[start..].iter().map(|l| l.len() + 1).sum::<usize>();
        n += 1;
    }
    lines
}

fn decode_all(lines: &[String]) -> usize {
    let mut decoder = Decoder::new(DecoderOptions::new("/workspace"));
    let mut out = Vec::new();
    let mut updates = 0;
    for line in lines {
        let signal = decoder.line(line, &mut Texts, &mut out);
        black_box(&signal);
        updates += out.len();
        // The caller sends and drops updates as it goes.
        out.clear();
    }
    updates
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group.sample_size(10);
    for (name, sizes) in [("mixed", MIXED), ("small_items", SMALL)] {
        let lines = input(sizes);
        let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(format!("{name}_{}MB", bytes / 1_000_000), |b| {
            b.iter(|| decode_all(black_box(&lines)));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
