//! What can go wrong reading or writing the registry: every variant names the file.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// A registry read or write that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The key cannot name a registry file (see [`super::registry_key`]).
    #[error("`{key}` is not a registry key (letters, digits, `.`, `_`, `@`, `-`; not starting with `.`)")]
    BadKey {
        /// The key given.
        key: String,
    },
    /// The registry folder could not be created or listed.
    #[error("registry folder `{path}`")]
    Dir {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The lock file could not be opened or locked.
    #[error("locking `{path}`")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Another writer held the lock for longer than the registry waits.
    #[error("`{path}` stayed locked for {waited:?}: another acplb is writing it (or hangs)")]
    LockTimeout {
        /// The lock file.
        path: PathBuf,
        /// How long this writer waited.
        waited: Duration,
    },
    /// A registry file could not be read.
    #[error("reading `{path}`")]
    Read {
        /// The registry file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A registry file is not a registry (not JSON, or no `version`): it is left as it is.
    #[error("`{path}` is not a valid registry file")]
    Parse {
        /// The registry file.
        path: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The new registry file could not be written or put in place.
    #[error("writing `{path}`")]
    Write {
        /// The registry file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file kept changing under this writer (writers that skip the lock).
    #[error("`{path}` changed under every one of {tries} attempts to update it")]
    Conflict {
        /// The registry file.
        path: PathBuf,
        /// How many read-modify-write rounds were tried.
        tries: u32,
    },
    /// The writer thread could not be started.
    #[error("starting the registry writer thread")]
    Thread(#[source] io::Error),
}
