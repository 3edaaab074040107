//! Deleting one kept session (`session/delete`, `acplb sessions delete`): its folder (journal,
//! summary, queue) and its registry entry. The session is held while its folder goes, so no
//! acplb opens it meanwhile, and one another acplb has open is refused. Blocking file work: call
//! it off the runtime thread.

use std::io;
use std::path::{Path, PathBuf};

use super::files::SessionDir;
use super::hold::HoldError;
use super::journal;
use super::registry::{Registry, RegistryError};
use super::state::{self, BadSessionId};

/// What a deletion removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The provider's conversation the journal named (a Codex thread), for the provider to
    /// delete in turn.
    pub thread_id: Option<String>,
    /// Whether the session had a folder.
    pub folder: bool,
    /// Whether the registry listed it.
    pub listed: bool,
}

/// Why a session was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
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
    /// Its folder could not be read or removed.
    #[error("cannot delete the session folder {}: {source}", .path.display())]
    Folder {
        /// The folder (or its lock file).
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Its registry entry could not be removed (its folder is gone already).
    #[error("the session's files are deleted but its registry entry is not: {0}")]
    Registry(#[from] RegistryError),
}

/// Deletes session `id` under `state`: its folder, held while it goes, then its registry entry.
pub fn delete(state: &Path, id: &str) -> Result<Deleted, DeleteError> {
    state::check_session_id(id)?;
    let folder_path = state::session_dir(state, id);
    let (folder, thread_id) = match SessionDir::open(state, id) {
        Ok(dir) => {
            let hold = dir.hold().map_err(|e| match e {
                HoldError::Io { source, path, .. } => DeleteError::Folder { path, source },
                held => DeleteError::Held(held),
            })?;
            let thread_id = match journal::read_in(&dir) {
                Ok(history) => history.facts().thread_id,
                Err(e) => {
                    tracing::warn!(session = %id, error = %e, "the journal of a deleted session could not be read; its thread is kept");
                    None
                }
            };
            // `remove_dir_all` deletes links inside the folder, never what they point to; the
            // folder itself was opened without following a link.
            std::fs::remove_dir_all(&folder_path).map_err(|source| DeleteError::Folder {
                path: folder_path.clone(),
                source,
            })?;
            drop(hold);
            (true, thread_id)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => (false, None),
        Err(source) => {
            return Err(DeleteError::Folder {
                path: folder_path,
                source,
            });
        }
    };
    let registry = Registry::new(state);
    let listed = match registry.find(id)? {
        Some(entry) => {
            registry.update(&entry.key, id, |_| None)?;
            true
        }
        None => false,
    };
    if !folder && !listed {
        return Err(DeleteError::Unknown {
            id: id.to_owned(),
            looked: state::sessions_dir(state),
        });
    }
    Ok(Deleted {
        thread_id,
        folder,
        listed,
    })
}
