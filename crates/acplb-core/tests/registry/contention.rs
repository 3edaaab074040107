//! Eight processes updating one registry file at once lose no update.

use std::collections::HashSet;

use crate::child;

const PROCESSES: usize = 8;
const UPDATES: usize = 200;
const KEY: &str = "arch@core";

#[test]
fn concurrent_processes_lose_no_update() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| child::spawn("contention::child_upserts", i, &state))
        .collect();
    for mut c in children {
        assert!(
            c.wait().unwrap().success(),
            "a writer failed (its stderr is above)"
        );
    }
    let reg = child::patient(&state);
    let listing = reg.all().unwrap();
    assert!(listing.problems.is_empty(), "{:?}", listing.problems);
    let ids: HashSet<String> = listing.into_entries().into_iter().map(|e| e.session_id).collect();
    let want: HashSet<String> = (0..PROCESSES)
        .flat_map(|p| (0..UPDATES).map(move |n| format!("p{p}-{n}")))
        .collect();
    assert_eq!(ids.len(), PROCESSES * UPDATES);
    assert_eq!(ids, want);
    assert_eq!(
        child::version_and_count(&reg.file(KEY)),
        ((PROCESSES * UPDATES) as u64, PROCESSES * UPDATES)
    );
}

/// Child: upserts its own 200 sessions, one update each.
#[test]
fn child_upserts() {
    let Some((index, state)) = child::role() else {
        return;
    };
    let reg = child::patient(&state);
    for n in 0..UPDATES {
        let id = format!("p{index}-{n}");
        reg.update(KEY, &id, |_| Some(child::entry(&id, "/w", n as u64)))
            .unwrap();
    }
}
