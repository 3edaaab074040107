//! The replies a worker sent through a backend that cannot find them again (`atm-cli`: `atm
//! send` takes no message id): one reply id per line in a private file under the state dir,
//! written right after the send, so a worker restarted after a crash sees that the message was
//! answered and only marks it read. What remains is the moment between the send and this one
//! `write(2)`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use ulid::Ulid;

use super::WorkerError;

/// The ledger of one worker (blocking file I/O: call it from the blocking pool).
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    path: PathBuf,
}

impl Ledger {
    /// The ledger of `agent` under the state dir `state`.
    pub(crate) fn new(state: &Path, agent: &str) -> Self {
        Self {
            path: state
                .join("workers")
                .join("agents")
                .join(format!("{agent}.replied")),
        }
    }

    /// Whether the reply `id` was sent.
    pub(crate) fn contains(&self, id: Ulid) -> Result<bool, WorkerError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text.lines().any(|l| l.trim() == id.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.failed("read", e)),
        }
    }

    /// Records that the reply `id` was sent.
    pub(crate) fn record(&self, id: Ulid) -> Result<(), WorkerError> {
        let fail = |e| self.failed("write", e);
        if let Some(dir) = self.path.parent() {
            acplb_core::sessions::state::create_private_dir(dir).map_err(fail)?;
        }
        let mut file = acplb_core::sessions::state::open_private_append(&self.path).map_err(fail)?;
        file.write_all(format!("{id}\n").as_bytes()).map_err(fail)
    }

    fn failed(&self, action: &'static str, source: std::io::Error) -> WorkerError {
        WorkerError::Ledger {
            action,
            path: self.path.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_recorded_reply_is_found_and_others_are_not() {
        let state = tempfile::tempdir().unwrap();
        let ledger = Ledger::new(state.path(), "bob@demo");
        let (a, b) = (Ulid::new(), Ulid::new());
        assert!(!ledger.contains(a).unwrap(), "no file yet");
        ledger.record(a).unwrap();
        assert!(ledger.contains(a).unwrap());
        assert!(!ledger.contains(b).unwrap());
        let a_again = Ledger::new(state.path(), "bob@demo");
        assert!(a_again.contains(a).unwrap(), "kept across restarts");
        let mode = std::fs::metadata(&ledger.path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
