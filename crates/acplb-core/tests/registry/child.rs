//! Child processes: the test binary runs itself with `--exact <child test>`; the child test
//! does its work only when the environment names its role.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use acplb_core::sessions::registry::{Entry, Registry};

const INDEX_ENV: &str = "ACPLB_TEST_REGISTRY_CHILD";
const STATE_ENV: &str = "ACPLB_TEST_REGISTRY_STATE";

/// Starts this test binary running only `test`, as child `index` writing to `state`.
pub fn spawn(test: &str, index: usize, state: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(INDEX_ENV, index.to_string())
        .env(STATE_ENV, state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// In a child: its index and state dir. `None` in a normal test run.
pub fn role() -> Option<(usize, PathBuf)> {
    let index = std::env::var(INDEX_ENV).ok()?.parse().unwrap();
    Some((index, PathBuf::from(std::env::var_os(STATE_ENV)?)))
}

/// A registry whose writers wait long for the lock: these tests count lost updates, and a
/// slow machine must not turn waiting into failing.
pub fn patient(state: &Path) -> Registry {
    Registry::new(state).with_lock_wait(Duration::from_secs(120))
}

/// An entry at a fixed time, `seconds` after 2026-01-01.
pub fn entry(id: &str, cwd: &str, seconds: u64) -> Entry {
    let t: SystemTime = UNIX_EPOCH + Duration::from_secs(1_767_225_600 + seconds);
    Entry::new(id, cwd, t)
}

/// The raw registry file: `(version, number of sessions)`, failing if it is not valid JSON.
pub fn version_and_count(file: &Path) -> (u64, usize) {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap())
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", file.display()));
    (
        v["version"].as_u64().unwrap(),
        v["sessions"].as_object().unwrap().len(),
    )
}
