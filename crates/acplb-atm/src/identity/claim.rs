//! The cross-process identity claim: an `O_EXCL` lock file per identity, suffixing on collision.
//!
//! `<ATM_HOME|HOME>/.config/atm/agent-sessions/<team>/<identity>.lock` holds
//! `{"pid", "agent_id", "start_time"}`, the same path and fields atm-agent-mcp uses, so each
//! sees the other's claims.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::IdentityError;
use crate::proc;

/// Suffixes tried after the base name (`name-2` .. `name-64`).
const MAX_SUFFIX: u32 = 64;
/// A lock file that does not parse yet may be mid-write by its creator for this long.
const UNWRITTEN_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Serialize, Deserialize)]
struct LockRecord {
    pid: i64,
    #[serde(default)]
    agent_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_time: Option<u64>,
}

/// A held identity; dropping it removes the lock file (if it is still ours).
#[derive(Debug)]
pub struct IdentityClaim {
    name: String,
    path: PathBuf,
    agent_id: String,
}

impl IdentityClaim {
    /// Claims `identity` in `sessions_dir` (the team's agent-sessions directory), or the first of
    /// `identity-2`, `identity-3`, ... not held by a live process. Dead holders are reclaimed.
    pub fn acquire(sessions_dir: &Path, identity: &str, agent_id: &str) -> Result<Self, IdentityError> {
        Self::acquire_upto(sessions_dir, identity, agent_id, MAX_SUFFIX)
    }

    /// Claims exactly `identity` (no suffix): a live holder is an error naming the lock file.
    /// Workers use this: mail to the name must reach them, never a `-2`.
    pub fn acquire_exact(sessions_dir: &Path, identity: &str, agent_id: &str) -> Result<Self, IdentityError> {
        Self::acquire_upto(sessions_dir, identity, agent_id, 1).map_err(|e| match e {
            IdentityError::Exhausted { identity, .. } => IdentityError::Held {
                path: sessions_dir.join(format!("{identity}.lock")),
                identity,
            },
            other => other,
        })
    }

    fn acquire_upto(
        sessions_dir: &Path,
        identity: &str,
        agent_id: &str,
        limit: u32,
    ) -> Result<Self, IdentityError> {
        std::fs::create_dir_all(sessions_dir).map_err(|source| IdentityError::Io {
            action: "create agent-sessions directory",
            path: sessions_dir.to_owned(),
            source,
        })?;
        for n in 1..=limit {
            // Never `.` in a suffix: ATM reads `<agent>.<host>.json` as an origin inbox.
            let name = if n == 1 {
                identity.to_owned()
            } else {
                format!("{identity}-{n}")
            };
            let path = sessions_dir.join(format!("{name}.lock"));
            if try_claim(&path, agent_id)? {
                if n > 1 {
                    tracing::info!(requested = identity, resolved = %name, "identity was taken; using a suffixed name");
                }
                return Ok(Self {
                    name,
                    path,
                    agent_id: agent_id.to_owned(),
                });
            }
            tracing::info!(identity = %name, "identity is held by a live session");
        }
        Err(IdentityError::Exhausted {
            identity: identity.to_owned(),
            limit,
        })
    }

    /// The claimed name (the requested one, or a suffixed one).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for IdentityClaim {
    fn drop(&mut self) {
        // Remove only our own record: if it was reclaimed by someone else, it is theirs now.
        let ours =
            read_record(&self.path).is_some_and(|r| r.pid == proc::own_pid() && r.agent_id == self.agent_id);
        if ours && let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), error = %e, "failed to release identity lock");
        }
    }
}

/// Creates the lock at `path`; `false` when a live process holds it.
fn try_claim(path: &Path, agent_id: &str) -> Result<bool, IdentityError> {
    let io = |action, source| IdentityError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    // A few rounds: a dead holder is removed and the name retried, and another claimant may win
    // the race for it in between.
    for _ in 0..3 {
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut file) => {
                let pid = proc::own_pid();
                let record = LockRecord {
                    pid,
                    agent_id: agent_id.to_owned(),
                    start_time: proc::start_time(pid),
                };
                let json = serde_json::to_vec(&record).map_err(|e| io("serialize", e.into()))?;
                file.write_all(&json)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| io("write identity lock", e))?;
                return Ok(true);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let Some(stale) = stale_content(path) else {
                    return Ok(false);
                };
                // Remove only if the file still holds what we judged stale.
                if std::fs::read(path).is_ok_and(|now| now == stale) {
                    tracing::info!(path = %path.display(), "reclaiming identity lock of a dead session");
                    match std::fs::remove_file(path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == ErrorKind::NotFound => {}
                        Err(e) => return Err(io("remove stale identity lock", e)),
                    }
                }
            }
            Err(e) => return Err(io("create identity lock", e)),
        }
    }
    Ok(false)
}

/// The lock file's bytes when its holder is gone, `None` while it is live.
fn stale_content(path: &Path) -> Option<Vec<u8>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    match serde_json::from_slice::<LockRecord>(&bytes) {
        Ok(r) if proc::holder_alive(r.pid, r.start_time) => None,
        Ok(_) => Some(bytes),
        // Empty or partial: its creator may be writing it right now; judge by age.
        Err(_) => {
            let age = std::fs::metadata(path).ok()?.modified().ok()?;
            let old = SystemTime::now()
                .duration_since(age)
                .is_ok_and(|a| a > UNWRITTEN_GRACE);
            old.then_some(bytes)
        }
    }
}

fn read_record(path: &Path) -> Option<LockRecord> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_file_format() {
        let dir = tempfile::tempdir().unwrap();
        let claim = IdentityClaim::acquire(dir.path(), "arch-ctm", "acplb:1").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(claim.path()).unwrap()).unwrap();
        assert_eq!(v["pid"], i64::from(std::process::id()));
        assert_eq!(v["agent_id"], "acplb:1");
        assert!(v["start_time"].is_u64());
    }

    #[test]
    fn unparseable_fresh_lock_counts_as_live_old_one_as_stale() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        std::fs::write(&path, "").unwrap();
        assert!(stale_content(&path).is_none());
        let old = SystemTime::now() - Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(stale_content(&path), Some(Vec::new()));
    }
}
