//! Two consumer processes claim while a third process sends 1,000 messages: every message is
//! delivered, none twice. The consumers also release some claims (a busy session), so released
//! files are raced for again.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use acplb_core::sessions::queue::{Queue, send};

use crate::child;

const MESSAGES: usize = 1_000;
const CONSUMERS: usize = 2;
const TARGET: &str = "bob@core";
/// A consumer puts back every `RELEASE_EVERY`th claim instead of delivering it.
const RELEASE_EVERY: usize = 7;

fn state(work: &Path) -> std::path::PathBuf {
    work.join("state")
}

/// Written by the writer after its last message is in place.
fn finished(work: &Path) -> std::path::PathBuf {
    work.join("writer.finished")
}

fn ids(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn two_consumers_claim_1000_messages_none_lost_none_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    Queue::open(&state(work), TARGET).unwrap();
    let mut children: Vec<_> = (0..CONSUMERS)
        .map(|i| child::spawn("race::child_consumes", i, work))
        .collect();
    children.push(child::spawn("race::child_sends", 0, work));
    for mut c in children {
        assert!(
            c.wait().unwrap().success(),
            "a child failed (its stderr is above)"
        );
    }

    let sent = ids(&work.join("sent"));
    assert_eq!(sent.len(), MESSAGES);
    let sent: HashSet<String> = sent.into_iter().collect();
    assert_eq!(sent.len(), MESSAGES, "ids are unique");

    let mut delivered = HashSet::new();
    let mut counts = Vec::new();
    for i in 0..CONSUMERS {
        let got = ids(&work.join(format!("delivered-{i}")));
        counts.push(got.len());
        for id in got {
            assert!(delivered.insert(id.clone()), "{id} was delivered twice");
        }
    }
    eprintln!("deliveries per consumer: {counts:?}");
    assert_eq!(delivered, sent, "every message sent was delivered");
    let left: Vec<_> = std::fs::read_dir(Queue::open(&state(work), TARGET).unwrap().dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left in the queue: {left:?}");
}

/// Child: sends the messages, recording each id, then says it has finished.
#[test]
fn child_sends() {
    let Some((_, work)) = child::role() else {
        return;
    };
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(work.join("sent"))
        .unwrap();
    for n in 0..MESSAGES {
        let id = send(&state(&work), TARGET, Some("writer"), &format!("message {n}")).unwrap();
        writeln!(out, "{id}").unwrap();
    }
    out.sync_all().unwrap();
    std::fs::write(finished(&work), "").unwrap();
}

/// Child: claims until the writer has finished and nothing waits; records each delivery before
/// settling it with `done`, and releases every seventh claim instead.
#[test]
fn child_consumes() {
    let Some((index, work)) = child::role() else {
        return;
    };
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(work.join(format!("delivered-{index}")))
        .unwrap();
    let mut queue = Queue::open(&state(&work), TARGET).unwrap();
    let mut claims = 0usize;
    loop {
        // Read before claiming: once the writer has finished, an empty claim means empty for
        // good (released files only come from consumers that are still running, i.e. us two,
        // and each of us ends only on an empty claim after its own releases).
        let writer_done = finished(&work).exists();
        match queue.claim_next().unwrap() {
            Some(claim) => {
                claims += 1;
                if claims.is_multiple_of(RELEASE_EVERY) {
                    claim.release().unwrap();
                    continue;
                }
                writeln!(out, "{}", claim.message().id).unwrap();
                claim.done().unwrap();
            }
            None if writer_done => break,
            // Idle backoff while the writer catches up; correctness does not depend on it.
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    out.sync_all().unwrap();
}
