//! One claim per process: every session of an acplb process that asks for the same identity
//! shares one [`IdentityClaim`], counted by reference and released with the last session.
//!
//! An acplb process is one team member. If each session claimed for itself, the second session
//! would find the first one's live claim and become `<identity>-2`, so mail sent to the name
//! would go unread in that session, and after 64 sessions claiming would fail.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};

use super::{IdentityClaim, IdentityError};

/// A claim is shared by the sessions asking for the same identity in the same directory.
type Key = (PathBuf, String);

struct Held {
    claim: IdentityClaim,
    users: usize,
}

/// The claims this process holds. Claiming and releasing happen under this lock, so a release
/// that removes the lock file can never race a new claim of the same name in this process.
static HELD: LazyLock<Mutex<HashMap<Key, Held>>> = LazyLock::new(Mutex::default);

/// This process's claim of one identity; the claim ends when the last handle is dropped.
#[derive(Debug)]
pub struct SharedClaim {
    key: Key,
    name: String,
    path: PathBuf,
}

impl SharedClaim {
    /// The claim of `identity` in `sessions_dir` this process already holds, or a new one
    /// (see [`IdentityClaim::acquire`]: a live holder in another process means a suffix).
    pub fn acquire(sessions_dir: &Path, identity: &str) -> Result<Self, IdentityError> {
        Self::acquire_with(sessions_dir, identity, false)
    }

    /// As [`SharedClaim::acquire`], but a live holder in another process is an error
    /// ([`IdentityClaim::acquire_exact`]) instead of a suffix.
    pub fn acquire_exact(sessions_dir: &Path, identity: &str) -> Result<Self, IdentityError> {
        Self::acquire_with(sessions_dir, identity, true)
    }

    fn acquire_with(sessions_dir: &Path, identity: &str, exact: bool) -> Result<Self, IdentityError> {
        let key = (sessions_dir.to_owned(), identity.to_owned());
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = held.get_mut(&key) {
            entry.users += 1;
            return Ok(Self::handle(key, &entry.claim));
        }
        let agent_id = format!("acplb:{}", std::process::id());
        let claim = if exact {
            IdentityClaim::acquire_exact(sessions_dir, identity, &agent_id)?
        } else {
            IdentityClaim::acquire(sessions_dir, identity, &agent_id)?
        };
        let handle = Self::handle(key.clone(), &claim);
        held.insert(key, Held { claim, users: 1 });
        Ok(handle)
    }

    fn handle(key: Key, claim: &IdentityClaim) -> Self {
        Self {
            key,
            name: claim.name().to_owned(),
            path: claim.path().to_owned(),
        }
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

impl Drop for SharedClaim {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(entry) = held.get_mut(&self.key) else {
            return;
        };
        entry.users = entry.users.saturating_sub(1);
        if entry.users == 0 {
            // Dropping the claim removes its lock file, still under `HELD`.
            held.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_share_one_claim_released_with_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let first = SharedClaim::acquire(dir.path(), "arch-ctm").unwrap();
        let second = SharedClaim::acquire(dir.path(), "arch-ctm").unwrap();
        let third = SharedClaim::acquire(dir.path(), "arch-ctm").unwrap();
        for claim in [&first, &second, &third] {
            assert_eq!(claim.name(), "arch-ctm");
        }
        assert!(!dir.path().join("arch-ctm-2.lock").exists());
        drop(first);
        drop(third);
        assert!(second.path().is_file(), "a session still holds it");
        let path = second.path().to_owned();
        drop(second);
        assert!(!path.exists(), "released with the last session");
        // And claimed afresh afterwards.
        let again = SharedClaim::acquire(dir.path(), "arch-ctm").unwrap();
        assert_eq!(again.name(), "arch-ctm");
        assert!(again.path().is_file());
    }

    #[test]
    fn other_identities_and_directories_are_claimed_apart() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let a = SharedClaim::acquire(dir.path(), "a").unwrap();
        let b = SharedClaim::acquire(dir.path(), "b").unwrap();
        let a_elsewhere = SharedClaim::acquire(other.path(), "a").unwrap();
        assert_eq!((a.name(), b.name(), a_elsewhere.name()), ("a", "b", "a"));
        assert_ne!(a.path(), a_elsewhere.path());
        drop(a);
        assert!(b.path().is_file() && a_elsewhere.path().is_file());
    }
}
