//! What the registry tests' children share: the process helpers (`support/child_process.rs`),
//! a patient registry, entries at fixed times, a file's version and size.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use acplb_core::sessions::registry::{Entry, Registry};

pub use crate::child_process::{role, spawn};

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
