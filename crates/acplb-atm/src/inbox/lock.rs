//! Claude Code's inbox lock: the directory `<agent>.json.lock`, taken with `mkdir`.
//!
//! Claude (proper-lockfile) treats a lock directory older than 10 s as stale and does not retry
//! when the lock is busy, so it drops its own message: we hold the lock for as little time as
//! possible. ATM 1.1.x uses the same name as a *file* holding `pid:token`; such a file is stale
//! only when its pid is dead.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::error::MailError;

/// How long to wait for the lock and when a holder counts as stale.
#[derive(Debug, Clone, Copy)]
pub struct LockPolicy {
    /// Give up after this long (`LockTimeout`).
    pub timeout: Duration,
    /// A lock directory whose mtime is older than this is stale (proper-lockfile uses 10 s).
    pub stale_after: Duration,
}

impl Default for LockPolicy {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(5),
            stale_after: Duration::from_secs(10),
        }
    }
}

/// A held inbox lock; dropping it removes the lock directory.
#[derive(Debug)]
pub(crate) struct InboxLock {
    path: PathBuf,
}

/// The lock path for an inbox: `<inbox>.lock`, i.e. `<agent>.json.lock`.
pub(crate) fn lock_path(inbox: &Path) -> PathBuf {
    let mut os = inbox.as_os_str().to_owned();
    os.push(".lock");
    PathBuf::from(os)
}

impl InboxLock {
    /// Takes the lock for `inbox`, breaking stale locks and retrying with jittered backoff.
    pub(crate) fn acquire(inbox: &Path, policy: LockPolicy) -> Result<Self, MailError> {
        let path = lock_path(inbox);
        let start = Instant::now();
        let mut attempt = 0_u32;
        loop {
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if break_if_stale(&path, policy.stale_after) {
                        continue;
                    }
                }
                Err(e) => return Err(MailError::io("create lock", &path, e)),
            }
            if start.elapsed() >= policy.timeout {
                return Err(MailError::LockTimeout {
                    path,
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(backoff(attempt));
            attempt = attempt.saturating_add(1);
        }
    }
}

impl Drop for InboxLock {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir(&self.path) {
            tracing::warn!(path = %self.path.display(), error = %e, "failed to release inbox lock");
        }
    }
}

/// Removes the lock at `path` if its holder is gone; `true` when the caller should retry at once.
fn break_if_stale(path: &Path, stale_after: Duration) -> bool {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        // Released between our mkdir and this look: retry immediately.
        Err(e) if e.kind() == ErrorKind::NotFound => return true,
        Err(_) => return false,
    };
    if meta.is_dir() {
        let age = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok());
        if age.is_none_or(|age| age <= stale_after) {
            return false;
        }
        // Only an empty directory is removed, so a lock that is not ours to judge survives.
        let removed = std::fs::remove_dir(path);
        tracing::warn!(path = %path.display(), ?age, ok = removed.is_ok(), "breaking stale inbox lock directory");
        return removed.is_ok() || removed.is_err_and(|e| e.kind() == ErrorKind::NotFound);
    }
    let Some(pid) = std::fs::read_to_string(path)
        .ok()
        .as_deref()
        .and_then(file_lock_pid)
    else {
        return false;
    };
    if crate::proc::pid_alive(pid) {
        return false;
    }
    let removed = std::fs::remove_file(path);
    tracing::warn!(path = %path.display(), pid, ok = removed.is_ok(), "breaking stale atm 1.1 lock file");
    removed.is_ok() || removed.is_err_and(|e| e.kind() == ErrorKind::NotFound)
}

/// The pid in an ATM 1.1.x lock file (`pid:token`).
fn file_lock_pid(content: &str) -> Option<i64> {
    content.trim().split(':').next()?.trim().parse().ok()
}

/// Sleep before retry `attempt`: 0.5 ms doubling to 4 ms, each jittered to 50–150 %.
///
/// Short, because holders keep the lock for a few milliseconds: a longer sleep leaves the lock
/// idle after release, and polling with `mkdir` costs next to nothing.
fn backoff(attempt: u32) -> Duration {
    let base_us = 500_u64 << attempt.min(3);
    Duration::from_micros(base_us / 2 + jitter() % base_us)
}

/// A cheap per-process pseudo-random number (xorshift over time, pid and a counter).
fn jitter() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut x = u64::from(nanos)
        ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER.fetch_add(0x9e37_79b9, Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast() -> LockPolicy {
        LockPolicy {
            timeout: Duration::from_millis(200),
            stale_after: Duration::from_secs(10),
        }
    }

    #[test]
    fn lock_is_a_directory_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("bob.json");
        let lock = InboxLock::acquire(&inbox, fast()).unwrap();
        assert!(dir.path().join("bob.json.lock").is_dir());
        assert!(matches!(
            InboxLock::acquire(&inbox, fast()),
            Err(MailError::LockTimeout { .. })
        ));
        drop(lock);
        assert!(!dir.path().join("bob.json.lock").exists());
    }

    #[test]
    fn old_lock_directory_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("bob.json");
        let lock = lock_path(&inbox);
        std::fs::create_dir(&lock).unwrap();
        let old = SystemTime::now() - Duration::from_secs(11);
        std::fs::File::open(&lock).unwrap().set_modified(old).unwrap();
        drop(InboxLock::acquire(&inbox, fast()).unwrap());
    }

    #[test]
    fn atm_file_lock_is_stale_only_when_its_pid_is_dead() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("bob.json");
        let lock = lock_path(&inbox);
        std::fs::write(&lock, format!("{}:tok", std::process::id())).unwrap();
        assert!(matches!(
            InboxLock::acquire(&inbox, fast()),
            Err(MailError::LockTimeout { .. })
        ));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(&lock, format!("{dead}:tok")).unwrap();
        drop(InboxLock::acquire(&inbox, fast()).unwrap());
        assert!(!lock.exists());
    }
}
