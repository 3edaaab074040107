//! End-to-end throughput of `playback decode`: the binary, a 100 MB file, output to /dev/null.
//!
//! Run with `cargo bench -p acplb-playback --bench decode_throughput` (release build). The input
//! is synthesized from real items: every stdout line Codex 0.169.0 printed in the recorded corpus
//! (`_artifacts/tests/scenarios`), run after run, repeated until the file holds 100 MB, written
//! once as an acplb transcript (`{"t_ms":…,"stdout":…}` lines) and once as raw `codex exec --json`
//! output. Each file is decoded five times; the best and the median time are reported.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::cast_precision_loss
)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acplb_playback::scenario::{EventKind, Scenario};
use serde_json::json;

const TARGET_BYTES: usize = 100 * 1000 * 1000;
const RUNS: usize = 5;

fn corpus_runs() -> Vec<Vec<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../_artifacts/tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .flat_map(|p| Scenario::load(p).unwrap().codex)
        .map(|run| {
            run.events
                .into_iter()
                .filter_map(|e| match e.kind {
                    EventKind::Stdout(line) => Some(line.replace("<cwd>", "/workspace/repo")),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn write_input(path: &Path, transcript: bool, runs: &[Vec<String>]) -> usize {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut bytes = 0;
    let mut t = 0u64;
    if transcript {
        let start =
            json!({"start": {"argv": ["exec", "--json"], "cwd": "/workspace/repo", "stdin_bytes": 20}});
        bytes += writeln_len(&mut out, &start.to_string());
    }
    'fill: loop {
        for run in runs {
            for line in run {
                t += 1;
                let text = if transcript {
                    json!({"t_ms": t, "stdout": line}).to_string()
                } else {
                    line.clone()
                };
                bytes += writeln_len(&mut out, &text);
                if bytes >= TARGET_BYTES {
                    break 'fill;
                }
            }
        }
    }
    if transcript {
        bytes += writeln_len(&mut out, &json!({"t_ms": t + 1, "exit": {"code": 0}}).to_string());
    }
    out.flush().unwrap();
    bytes
}

fn writeln_len(out: &mut impl std::io::Write, line: &str) -> usize {
    writeln!(out, "{line}").unwrap();
    line.len() + 1
}

/// CPU seconds of waited-for children so far (`cutime + cstime` in `/proc/self/stat`, at the
/// usual 100 ticks per second): the load-independent part of the measurement.
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields after the command: state is 0, so utime..cstime are 11..14.
    (ticks(13) + ticks(14)) / 100.0
}

fn time_decode(path: &Path) -> (Duration, f64) {
    let cpu_before = children_cpu();
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_playback"))
        .arg("decode")
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(status.success(), "decode failed on {}", path.display());
    (elapsed, children_cpu() - cpu_before)
}

fn main() {
    // `cargo test --benches` runs benches with `--bench`-less args; only measure under `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runs = corpus_runs();
    let lines: usize = runs.iter().map(Vec::len).sum();
    let dir = tempfile::tempdir().unwrap();
    for (name, transcript) in [("acplb transcript", true), ("raw codex stdout", false)] {
        let path = dir.path().join(if transcript {
            "transcript.jsonl"
        } else {
            "raw.jsonl"
        });
        let bytes = write_input(&path, transcript, &runs);
        let measured: Vec<(Duration, f64)> = (0..RUNS).map(|_| time_decode(&path)).collect();
        let mut times: Vec<f64> = measured.iter().map(|m| m.0.as_secs_f64()).collect();
        let mut cpu: Vec<f64> = measured.iter().map(|m| m.1).collect();
        times.sort_by(f64::total_cmp);
        cpu.sort_by(f64::total_cmp);
        let mb = bytes as f64 / 1e6;
        let (best, median) = (times[0], times[RUNS / 2]);
        println!(
            "decode {name}: {mb:.1} MB ({lines} distinct real lines from {} runs, repeated): wall best {best:.3} s = {:.0} MB/s, median {median:.3} s = {:.0} MB/s; CPU (all threads) median {:.2} s",
            runs.len(),
            mb / best,
            mb / median,
            cpu[RUNS / 2]
        );
    }
}
