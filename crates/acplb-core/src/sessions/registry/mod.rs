//! The session registry: which sessions exist, where and when they ran, and where they stand,
//! one JSON file per identity under `<state>/registry/` (see [`super::state`]).
//!
//! ```text
//! <state>/registry/<key>.json        {"version": N, "sessions": {"<session id>": Entry, ...}}
//! <state>/registry/<key>.json.lock   the writers' lock
//! ```
//!
//! The key is the session's ATM identity (`name@team`, see [`registry_key`]) or `_local`, so
//! sessions of different identities never contend for one file. Writes ([`Registry::update`])
//! block: they lock, read, change and atomically replace the file, checking its version. Reads
//! ([`Registry::all`], [`Registry::find`]) take no lock. On the runtime thread, writes go
//! through a [`RegistryWriter`], whose thread applies them in order.

mod entry;
mod error;
mod file;
mod listing;
mod page;
mod repo;
mod tracked;
mod writer;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

pub use entry::{Entry, LOCAL_KEY, Status, pid_alive, registry_key, timestamp};
pub use error::RegistryError;
pub use listing::{Listed, Listing};
pub use page::{BadCursor, DEFAULT_PAGE_SIZE, Page, page, sort_newest_first};
pub use repo::RepoInfo;
pub use tracked::Tracked;
pub use writer::{Change, Op, RegistryWriter};

use file::Sessions;

/// The registry of one state directory.
#[derive(Clone, Debug)]
pub struct Registry {
    dir: PathBuf,
    limits: file::Limits,
}

impl Registry {
    /// How long a write waits for another writer's lock by default.
    pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(5);

    /// How many read-modify-write rounds a write tries when the file keeps changing under it.
    const TRIES: u32 = 8;

    /// The registry under the state directory `state` (nothing is created until a write).
    pub fn new(state: &Path) -> Registry {
        Registry {
            dir: super::state::registry_dir(state),
            limits: file::Limits {
                lock_wait: Self::DEFAULT_LOCK_WAIT,
                tries: Self::TRIES,
            },
        }
    }

    /// The same registry, waiting at most `wait` for a writer's lock.
    #[must_use]
    pub fn with_lock_wait(mut self, wait: Duration) -> Registry {
        self.limits.lock_wait = wait;
        self
    }

    /// The registry folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key` (which must have passed through [`registry_key`]).
    pub fn file(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// Changes the entry of `session_id` in the file of `key`: `change` gets the entry (`None`
    /// when there is none, or when it cannot be read) and returns the new one, `None` to
    /// remove it. Fields of the stored entry that [`Entry`] does not know are kept. Nothing is
    /// written when nothing changes. Blocks on the lock (at most the lock wait) and on disk.
    pub fn update(
        &self,
        key: &str,
        session_id: &str,
        mut change: impl FnMut(Option<Entry>) -> Option<Entry>,
    ) -> Result<(), RegistryError> {
        self.modify(key, |sessions| apply(sessions, session_id, &mut change))
            .map(drop)
    }

    /// Locks the file of `key` and lets `change` edit all its sessions at once (`true` when it
    /// changed any); returns whether the file was written.
    fn modify(&self, key: &str, change: impl FnMut(&mut Sessions) -> bool) -> Result<bool, RegistryError> {
        if !entry::check_key(key) {
            return Err(RegistryError::BadKey { key: key.to_owned() });
        }
        super::state::create_private_dir(&self.dir).map_err(|source| RegistryError::Dir {
            path: self.dir.clone(),
            source,
        })?;
        file::modify(&self.file(key), self.limits, change)
    }

    /// Every session of every registry file. Files or entries that cannot be read are in
    /// [`Listing::problems`]; the error is only for a registry folder that cannot be listed.
    pub fn all(&self) -> Result<Listing, RegistryError> {
        listing::read_all(&self.dir)
    }

    /// The session `session_id`, with its key, in whichever file holds it.
    pub fn find(&self, session_id: &str) -> Result<Option<Listed>, RegistryError> {
        let listing = self.all()?;
        for problem in &listing.problems {
            tracing::warn!(%problem, "registry file skipped");
        }
        Ok(listing
            .entries
            .into_iter()
            .find(|l| l.entry.session_id == session_id))
    }
}

/// Applies one entry's change to a file's sessions; `true` when the stored value changed.
fn apply(
    sessions: &mut Sessions,
    session_id: &str,
    change: &mut impl FnMut(Option<Entry>) -> Option<Entry>,
) -> bool {
    let stored = sessions.get(session_id);
    let old: Option<Map<String, Value>> = stored.and_then(|raw| serde_json::from_str(raw.get()).ok());
    let current = stored.and_then(|raw| match serde_json::from_str::<Entry>(raw.get()) {
        Ok(e) => Some(e),
        Err(e) => {
            tracing::warn!(session = session_id, error = %e, "unreadable registry entry replaced");
            None
        }
    });
    let Some(new) = change(current) else {
        return sessions.remove(session_id).is_some();
    };
    let Ok(Value::Object(fields)) = serde_json::to_value(&new) else {
        // An `Entry` always serialises to an object.
        return false;
    };
    // Start from the stored object so the fields a newer acplb wrote survive.
    let mut merged = old.clone().unwrap_or_default();
    merged.extend(fields);
    if old.as_ref() == Some(&merged) {
        return false;
    }
    match serde_json::value::to_raw_value(&merged) {
        Ok(raw) => {
            sessions.insert(session_id.to_owned(), raw);
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests;
