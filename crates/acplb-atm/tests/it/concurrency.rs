//! 8 writer processes × 500 messages into one inbox, alongside a writer that locks like Claude
//! (mkdir lock, in-place write) and a reader checking the file while it changes.
//!
//! The writer processes are this test binary re-run with `STRESS_CHILD` set, which turns
//! `stress_writer_child` from a no-op into the writer.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use acplb_atm::{LockPolicy, MailStore};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::util::inbox;

const WRITERS: usize = 8;
const PER_WRITER: usize = 500;
const CLAUDE_MESSAGES: usize = 100;
const STRESS_CHILD: &str = "ACPLB_ATM_STRESS_CHILD";

/// The writer process body; a no-op unless started by the stress test.
#[test]
fn stress_writer_child() {
    let Ok(spec) = std::env::var(STRESS_CHILD) else {
        return;
    };
    let (root, index) = spec.rsplit_once('|').unwrap();
    // Generous timeout: under full contention on 2 cores a waiter can be unlucky for a while,
    // and a timeout here would count as a lost message.
    let policy = LockPolicy {
        timeout: Duration::from_secs(60),
        ..LockPolicy::default()
    };
    let store = MailStore::new(root, &format!("w{index}"), "demo")
        .unwrap()
        .with_lock_policy(policy);
    for n in 0..PER_WRITER {
        store.send("bob", &format!("w{index}-{n}"), None).unwrap();
    }
}

/// Appends one message the way Claude Code does: `mkdir` lock (retrying here, so the test
/// writer loses nothing itself), read, `JSON.stringify(arr, null, 2)`, write in place.
fn claude_append(path: &Path, n: usize, seq: &AtomicU64) {
    let lock = PathBuf::from(format!("{}.lock", path.display()));
    loop {
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => std::thread::sleep(Duration::from_micros(500)),
            Err(e) => panic!("claude lock: {e}"),
        }
    }
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut arr: Vec<&RawValue> = if text.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(&text).unwrap()
    };
    let record = json!({"from": "claude", "text": format!("c-{n}"), "timestamp": "2026-01-01T00:00:00.000Z", "read": false, "color": "blue"});
    let record = RawValue::from_string(record.to_string()).unwrap();
    arr.push(&record);
    // The whole array is serialised again (as `JSON.stringify` does); records are kept as raw
    // text only because a full `Value` round trip is slow in debug builds.
    let out = format!(
        "[\n  {}\n]",
        arr.iter().map(|r| r.get()).collect::<Vec<_>>().join(",\n  ")
    );
    // Odd while the file is being rewritten in place, so the checker can tell Claude's
    // half-written states (which Claude really exposes) from ours (which must never happen).
    seq.fetch_add(1, Ordering::SeqCst);
    std::fs::write(path, out).unwrap();
    seq.fetch_add(1, Ordering::SeqCst);
    std::fs::remove_dir(&lock).unwrap();
}

#[derive(Debug, Default)]
struct CheckStats {
    valid_reads: usize,
    claude_partial_reads: usize,
    invalid_reads_outside_claude_writes: Vec<String>,
    shrank: usize,
}

fn check_loop(path: &Path, seq: &AtomicU64, done: &AtomicBool) -> CheckStats {
    let mut stats = CheckStats::default();
    let mut last_len = 0;
    while !done.load(Ordering::SeqCst) {
        let before = seq.load(Ordering::SeqCst);
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => panic!("read: {e}"),
        };
        let after = seq.load(Ordering::SeqCst);
        match serde_json::from_str::<Vec<&RawValue>>(&text) {
            Ok(records) => {
                stats.valid_reads += 1;
                stats.shrank += usize::from(records.len() < last_len);
                last_len = records.len();
            }
            Err(_) if before != after || before % 2 == 1 => stats.claude_partial_reads += 1,
            Err(e) => stats
                .invalid_reads_outside_claude_writes
                .push(format!("{e}: {} bytes", text.len())),
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    stats
}

#[test]
fn eight_processes_and_a_claude_writer_lose_nothing() {
    // On tmpfs when there is one: the test is about locking and atomic replacement, and with
    // 4,000 fsyncs of a growing file on a shared disk it would measure the disk instead.
    let shm = Path::new("/dev/shm");
    let root = if shm.is_dir() {
        tempfile::tempdir_in(shm)
    } else {
        tempfile::tempdir()
    }
    .unwrap();
    std::fs::create_dir_all(root.path().join("teams/demo/inboxes")).unwrap();
    let path = inbox(root.path(), "bob");
    let started = Instant::now();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..WRITERS)
        .map(|i| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "concurrency::stress_writer_child",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env(STRESS_CHILD, format!("{}|{i}", root.path().display()))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();

    let seq = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let checker = {
        let (path, seq, done) = (path.clone(), Arc::clone(&seq), Arc::clone(&done));
        std::thread::spawn(move || check_loop(&path, &seq, &done))
    };
    let claude = {
        let (path, seq) = (path.clone(), Arc::clone(&seq));
        std::thread::spawn(move || {
            for n in 0..CLAUDE_MESSAGES {
                claude_append(&path, n, &seq);
                // Spread over the writers' run rather than finishing early.
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };

    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    claude.join().unwrap();
    done.store(true, Ordering::SeqCst);
    let stats = checker.join().unwrap();
    let elapsed = started.elapsed();

    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in &records {
        *seen.entry(r["text"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    let expected: Vec<String> = (0..WRITERS)
        .flat_map(|i| (0..PER_WRITER).map(move |n| format!("w{i}-{n}")))
        .chain((0..CLAUDE_MESSAGES).map(|n| format!("c-{n}")))
        .collect();
    let lost: Vec<_> = expected.iter().filter(|t| !seen.contains_key(*t)).collect();
    let duplicated: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    println!(
        "stress: {} records in {elapsed:.1?}; checker: {} valid reads, {} reads of Claude's in-place write",
        records.len(),
        stats.valid_reads,
        stats.claude_partial_reads
    );
    assert!(
        lost.is_empty(),
        "lost {} messages, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    assert!(duplicated.is_empty(), "duplicated: {duplicated:?}");
    assert_eq!(records.len(), WRITERS * PER_WRITER + CLAUDE_MESSAGES);
    assert!(
        stats.invalid_reads_outside_claude_writes.is_empty(),
        "{:?}",
        stats.invalid_reads_outside_claude_writes
    );
    assert_eq!(stats.shrank, 0, "a reader saw the inbox lose records");
    assert!(stats.valid_reads > 10, "the checker barely ran: {stats:?}");
    // Each writer's own messages stay in its send order.
    for i in 0..WRITERS {
        let prefix = format!("w{i}-");
        let order: Vec<usize> = records
            .iter()
            .filter_map(|r| r["text"].as_str()?.strip_prefix(&prefix)?.parse().ok())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "writer {i} out of order");
    }
}
