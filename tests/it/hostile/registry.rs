//! The session registry slow to write while acplb stops (a slow or busy disk, another writer
//! holding its lock): what the sessions told it still lands within its own limit past the
//! shutdown's grace, and a registry that stays locked longer never holds acplb up for good.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acplb_core::sessions::state::registry_dir;
use nix::fcntl::{Flock, FlockArg};
use serde_json::Value;

use crate::harness::{open_session, prompt};
use crate::live::Live;

/// The one registry file's writers' lock, taken by this test (as another acplb would).
fn lock_the_registry(state: &Path) -> Flock<File> {
    let dir = registry_dir(state);
    let locks: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.lock"))
        .collect();
    assert_eq!(locks.len(), 1, "{locks:?}");
    let file = File::options().read(true).write(true).open(&locks[0]).unwrap();
    Flock::lock(file, FlockArg::LockExclusive).unwrap_or_else(|(_, e)| panic!("flock: {e}"))
}

/// One turn, then the registry locked and stdin closed; the lock is let go after `hold`.
/// acplb's exit code, how long it took to exit after stdin closed, the session's entry as
/// `acplb sessions list --json` shows it, and acplb's stderr.
async fn stop_with_the_registry_locked(hold: Duration) -> (Option<i32>, Duration, Value, String) {
    let mut live = Live::start();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let (id, lock) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain hi").await?;
            // A list answers once this process's registry changes are written: the file is there.
            cx.send_request(agent_client_protocol::v1::schema::ListSessionsRequest::new())
                .block_task()
                .await?;
            Ok((s.session_id.to_string(), lock_the_registry(&state)))
        })
        .await
        .unwrap();
    let closed = Instant::now();
    let unlock = std::thread::spawn(move || {
        std::thread::sleep(hold);
        drop(lock);
    });
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    let took = closed.elapsed();
    unlock.join().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
        .args(["sessions", "list", "--json"])
        .env("ACPLB_STATE_DIR", live.state_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = list
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sessionId"] == id.as_str())
        .unwrap_or_else(|| panic!("{list}"))
        .clone();
    (code, took, entry, live.acplb.stderr())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_locked_past_the_shutdown_grace_still_gets_the_sessions_last_state() {
    // Longer than the grace (0.9 s), shorter than the grace and the registry's own limit (3 s).
    let hold = Duration::from_secs(2);
    let (code, took, entry, stderr) = stop_with_the_registry_locked(hold).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        took >= hold,
        "acplb left before its registry was written: {took:?}"
    );
    assert_eq!(entry["status"], "idle", "{entry}\n{stderr}");
    assert!(
        entry["pid"].is_null(),
        "released by the process that held it: {entry}"
    );
    assert!(!stderr.contains("still being written"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_that_stays_locked_lets_acplb_exit_and_the_session_shows_interrupted() {
    // Past the grace and the registry's limit: acplb leaves, says why, and the entry it could
    // not update is not taken for a running session.
    let (code, took, entry, stderr) = stop_with_the_registry_locked(Duration::from_secs(8)).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(7), "held up by the lock: {took:?}");
    assert!(stderr.contains("still being written"), "{stderr}");
    assert_eq!(entry["status"], "interrupted", "{entry}");
}
