//! A kept session no acplb has open, changed in place: its title (`session/set_title`: a
//! `session_info_update` appended to its journal, so a later load shows it, and the registry's
//! title) or its archive mark (`session/archive`, `session/unarchive`: the registry's
//! `archived`). The session is held while it changes, so no acplb opens it meanwhile; one that
//! another acplb has open is refused. Blocking file work: call it off the runtime thread.

use std::io;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{SessionInfoUpdate, SessionUpdate};

use super::files::SessionDir;
use super::hold::{Hold, HoldError};
use super::journal::{self, Journal};
use super::registry::{Registry, RegistryError};
use super::state::{self, BadSessionId};

/// Why a kept session was not changed.
#[derive(Debug, thiserror::Error)]
pub enum ShelfError {
    /// The id cannot name a session.
    #[error(transparent)]
    BadId(#[from] BadSessionId),
    /// acplb keeps no session of that id.
    #[error("unknown session `{id}`: acplb keeps no session of that id (looked in {})", .looked.display())]
    Unknown {
        /// The session id.
        id: String,
        /// Where sessions are kept.
        looked: PathBuf,
    },
    /// An acplb has it open (this one: still opening or closing; another: named by its pid).
    #[error(transparent)]
    Held(HoldError),
    /// Its journal could not be read or written.
    #[error("cannot change the journal of session `{id}`: {error}")]
    Journal {
        /// The session id.
        id: String,
        /// What failed.
        error: String,
    },
    /// The registry does not list it, so it has no archive mark to set.
    #[error("session `{id}` is not in the session registry, so acplb cannot archive or unarchive it")]
    Unlisted {
        /// The session id.
        id: String,
    },
    /// The registry could not be read or written.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// Session `id` held, with the thread its journal names.
fn hold(state: &Path, id: &str) -> Result<(SessionDir, Hold, Option<String>), ShelfError> {
    state::check_session_id(id)?;
    let dir = SessionDir::open(state, id).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ShelfError::Unknown {
            id: id.to_owned(),
            looked: state::sessions_dir(state),
        },
        _ => ShelfError::Journal {
            id: id.to_owned(),
            error: e.to_string(),
        },
    })?;
    let hold = dir.hold().map_err(ShelfError::Held)?;
    let thread = journal::read_in(&dir)
        .map_err(|e| ShelfError::Journal {
            id: id.to_owned(),
            error: e.to_string(),
        })?
        .facts()
        .thread_id;
    Ok((dir, hold, thread))
}

/// Sets the title of session `id` (kept, open nowhere): a `session_info_update` in its journal
/// (`limit`: the journal's size limit) and the registry's title. Returns its thread, for the
/// provider to rename.
pub fn retitle(state: &Path, id: &str, title: &str, limit: u64) -> Result<Option<String>, ShelfError> {
    let (dir, hold, thread) = hold(state, id)?;
    let journal = Journal::amend(&dir, hold, limit).map_err(|e| ShelfError::Journal {
        id: id.to_owned(),
        error: e.to_string(),
    })?;
    let info = SessionInfoUpdate::new().title(title.to_owned());
    journal.update(&SessionUpdate::SessionInfoUpdate(info));
    if journal.lost() > 0 {
        return Err(ShelfError::Journal {
            id: id.to_owned(),
            error: "the title could not be written".into(),
        });
    }
    let registry = Registry::new(state);
    if let Some(listed) = registry.find(id)? {
        registry.update(&listed.key, id, |e| {
            e.map(|mut e| {
                e.title = Some(title.to_owned());
                e
            })
        })?;
    }
    drop(journal);
    Ok(thread)
}

/// Marks session `id` (kept, open nowhere) archived or not in the registry. Returns its thread,
/// for the provider to archive or unarchive too; `None` when it was so already (nothing is
/// held then: a session some acplb has open is never archived, so unarchiving it succeeds).
pub fn set_archived(state: &Path, id: &str, archived: bool) -> Result<Option<String>, ShelfError> {
    state::check_session_id(id)?;
    let registry = Registry::new(state);
    if registry.find(id)?.is_some_and(|l| l.entry.archived == archived) {
        return Ok(None);
    }
    let (_dir, hold, thread) = hold(state, id)?;
    let Some(listed) = registry.find(id)? else {
        return Err(ShelfError::Unlisted { id: id.to_owned() });
    };
    registry.update(&listed.key, id, |e| {
        e.map(|mut e| {
            e.archived = archived;
            e
        })
    })?;
    drop(hold);
    Ok(thread)
}

/// Whether the registry marks session `id` archived (an unreadable registry counts as not).
pub fn is_archived(state: &Path, id: &str) -> bool {
    match Registry::new(state).find(id) {
        Ok(found) => found.is_some_and(|l| l.entry.archived),
        Err(e) => {
            tracing::warn!(session = %id, error = %e, "the registry could not be read for the archive mark");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::ContentBlock;

    use super::*;
    use crate::sessions::registry::{Change, Entry, RegistryWriter};

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

    fn kept(state: &Path) {
        let j = Journal::create(state, ID, Path::new("/w"), u64::MAX).unwrap();
        j.thread("thr-1");
        j.prompt(1, &[ContentBlock::from("remember the pelican")], false);
        let writer = RegistryWriter::start(Registry::new(state)).unwrap();
        writer.send(Change::upsert(Entry::new(ID, "/w", std::time::SystemTime::now())));
        writer.flush_blocking();
    }

    #[test]
    fn a_title_lands_in_the_journal_and_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        kept(dir.path());
        let thread = retitle(dir.path(), ID, "Pelicans", u64::MAX).unwrap();
        assert_eq!(thread.as_deref(), Some("thr-1"));
        let facts = journal::read(dir.path(), ID).unwrap().facts();
        assert_eq!(facts.title.as_deref(), Some("Pelicans"));
        let entry = Registry::new(dir.path()).find(ID).unwrap().unwrap().entry;
        assert_eq!(entry.title.as_deref(), Some("Pelicans"));
    }

    #[test]
    fn the_archive_mark_comes_and_goes() {
        let dir = tempfile::tempdir().unwrap();
        kept(dir.path());
        assert!(!is_archived(dir.path(), ID));
        assert_eq!(
            set_archived(dir.path(), ID, true).unwrap().as_deref(),
            Some("thr-1")
        );
        assert!(is_archived(dir.path(), ID));
        assert_eq!(
            set_archived(dir.path(), ID, true).unwrap(),
            None,
            "archived already"
        );
        assert_eq!(
            set_archived(dir.path(), ID, false).unwrap().as_deref(),
            Some("thr-1")
        );
        assert!(!is_archived(dir.path(), ID));
        // Not archived, and held: unarchiving it succeeds without the hold.
        let dir_handle = SessionDir::open(dir.path(), ID).unwrap();
        let _held = dir_handle.hold().unwrap();
        assert_eq!(set_archived(dir.path(), ID, false).unwrap(), None);
    }

    #[test]
    fn unknown_held_and_bad_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = set_archived(dir.path(), ID, true).unwrap_err();
        assert!(matches!(e, ShelfError::Unknown { .. }), "{e}");
        assert!(matches!(
            retitle(dir.path(), "../x", "t", u64::MAX),
            Err(ShelfError::BadId(_))
        ));
        kept(dir.path());
        let dir_handle = SessionDir::open(dir.path(), ID).unwrap();
        let _held = dir_handle.hold().unwrap();
        let e = retitle(dir.path(), ID, "t", u64::MAX).unwrap_err();
        assert!(matches!(e, ShelfError::Held(_)), "{e}");
    }
}
