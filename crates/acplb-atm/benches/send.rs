//! `send` into an inbox that already holds 10,000 messages (target: under 50 ms), cold (a fresh
//! store, as in a new process) and warm (a store that has seen the inbox before).
//!
//! Run with `cargo bench -p acplb-atm --bench send`. Every send writes and fsyncs the whole
//! ~4 MB inbox, so the figure is mostly the disk's.
#![allow(missing_docs)]
#![allow(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should abort the run"
)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_atm::{MailStore, ReadOptions};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

const EXISTING: usize = 10_000;

/// A Claude root whose `bob` inbox holds `EXISTING` interop-shaped records; returns the inbox
/// path and its baseline text.
fn setup(root: &Path) -> (PathBuf, String) {
    let inboxes = root.join("teams/demo/inboxes");
    std::fs::create_dir_all(&inboxes).unwrap();
    let records: Vec<_> = (0..EXISTING)
        .map(|i| {
            let id = ulid::Ulid::new();
            json!({
                "from": "alice",
                "text": format!("message number {i} with a little body text to make it realistic"),
                "timestamp": "2026-02-11T14:30:00.000Z",
                "read": i % 3 == 0,
                "summary": format!("message number {i}"),
                "message_id": uuid::Uuid::from_bytes(id.to_bytes()).to_string(),
                "metadata": {"atm": {"messageId": id.to_string(), "sourceTeam": "demo"}},
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&records).unwrap();
    let path = inboxes.join("bob.json");
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

fn bench_send(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let (path, baseline) = setup(root.path());
    let reset = || std::fs::write(&path, &baseline).unwrap();
    let mut group = c.benchmark_group("send_into_10k_inbox");
    group.sample_size(30).measurement_time(Duration::from_secs(10));

    group.bench_function("cold", |b| {
        b.iter_batched(
            || {
                reset();
                MailStore::new(root.path(), "codex", "demo").unwrap()
            },
            |store| store.send("bob", "hello from the bench", None).unwrap(),
            BatchSize::PerIteration,
        );
    });

    // `bob` sending to itself: reading its own inbox in the setup lets the store remember the
    // file, as a long-running session does after its first send.
    let warm = MailStore::new(root.path(), "bob", "demo").unwrap();
    group.bench_function("warm", |b| {
        b.iter_batched(
            || {
                reset();
                warm.pending_count().unwrap();
            },
            |()| warm.send("bob", "hello from the bench", None).unwrap(),
            BatchSize::PerIteration,
        );
    });

    group.bench_function("with_id_duplicate_scan", |b| {
        b.iter_batched(
            || {
                reset();
                MailStore::new(root.path(), "codex", "demo").unwrap()
            },
            |store| {
                store
                    .send_with_id("bob", "hello from the bench", None, ulid::Ulid::new())
                    .unwrap()
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();

    let mut group = c.benchmark_group("read_10k_inbox");
    group.sample_size(20);
    reset();
    let reader = MailStore::new(root.path(), "bob", "demo").unwrap();
    group.bench_function("read_10", |b| {
        b.iter(|| reader.read(&ReadOptions::default()).unwrap());
    });
    group.bench_function("pending_count", |b| b.iter(|| reader.pending_count().unwrap()));
    group.finish();
}

criterion_group!(benches, bench_send);
criterion_main!(benches);
