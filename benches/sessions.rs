//! `cargo bench --bench sessions`: what durable sessions cost, on a temporary state dir.
//!
//! - listing: `Registry::all()` + the first page, over 1,000 sessions in 10 identity files
//!   (what `session/list` and `acplb sessions list` do);
//! - one `Registry::update()` (lock, read, change, write, rename) in a file of 100 sessions,
//!   and in one of 1,000 (an identity that kept every session).
//!
//! Each figure is the median of 50 runs (min and max beside it). One function per measurement,
//! each returning its samples for `report`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use acplb_core::sessions::registry::{DEFAULT_PAGE_SIZE, Entry, Registry, Status, page, registry_key};

const RUNS: usize = 50;
const SESSIONS: usize = 1_000;
const IDENTITIES: usize = 10;

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let spread = tmp.path().join("spread");
    seed(&spread, SESSIONS, IDENTITIES);
    let single = tmp.path().join("single");
    seed(&single, SESSIONS, 1);

    println!("sessions bench: median of {RUNS} runs (min .. max)");
    report(
        "registry all() + first page, 1,000 sessions / 10 files",
        list_first_page(&spread),
    );
    report(
        "registry update(), file of 100 sessions",
        update_one(&spread, &key(0)),
    );
    report(
        "registry update(), file of 1,000 sessions",
        update_one(&single, &key(0)),
    );
}

fn key(identity: usize) -> String {
    registry_key(Some(&format!("agent{identity}")), Some("team"))
}

/// A registry of `sessions` sessions spread over `identities` files, with a realistic spread
/// of times, cwds, titles and statuses.
fn seed(state: &Path, sessions: usize, identities: usize) {
    let reg = Registry::new(state);
    let start = SystemTime::now() - Duration::from_secs(90 * 86_400);
    for i in 0..sessions {
        let identity = i % identities;
        let id = format!("{i:08x}-1c2d-4e5f-8a9b-0c1d2e3f4a5b");
        let at = start + Duration::from_secs(u64::try_from(i).unwrap() * 7_777);
        let mut e = Entry::new(&id, format!("/home/dev/src/project{}", i % 25), at);
        e.identity = Some(format!("agent{identity}"));
        e.team = Some("team".into());
        e.thread_id = Some(format!("thread-{i}"));
        e.title = Some(format!("fix the flaky test number {i} in the session registry"));
        e.status = [Status::Idle, Status::Closed, Status::Interrupted][i % 3];
        reg.update(&key(identity), &id, |_| Some(e.clone())).unwrap();
    }
}

fn list_first_page(state: &Path) -> Vec<Duration> {
    let reg = Registry::new(state);
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let listing = reg.all().unwrap();
            assert!(listing.problems.is_empty());
            let first = page(listing.entries, None, None, DEFAULT_PAGE_SIZE).unwrap();
            assert_eq!(first.entries.len(), DEFAULT_PAGE_SIZE);
            t.elapsed()
        })
        .collect()
}

fn update_one(state: &Path, key: &str) -> Vec<Duration> {
    let reg = Registry::new(state);
    let id = reg
        .all()
        .unwrap()
        .entries
        .into_iter()
        .find(|l| l.key == key)
        .unwrap()
        .entry
        .session_id;
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            reg.update(key, &id, |old| {
                let mut e = old.unwrap();
                e.last_active = acplb_core::sessions::registry::timestamp(SystemTime::now());
                Some(e)
            })
            .unwrap();
            t.elapsed()
        })
        .collect()
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<56} {:>8.3} ms  ({:.3} .. {:.3})",
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
    );
}
