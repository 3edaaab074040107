//! The hold on an open session: an exclusive `flock` on `journal.lock` in its folder, taken
//! when the session opens (new, loaded, resumed) and kept as long as its journal is open.
//!
//! The kernel drops the lock with the last descriptor of the file, so a session is free again
//! the moment the process holding it exits, even by SIGKILL, and two live processes can never
//! both have it: whichever asks second is refused, at once, however close together they ask.
//! The holder writes its process id into the file, only to name it in the refusal, and clears
//! it when it lets go.

use std::fs::File;
use std::io::{self, Read as _, Seek as _, Write as _};
use std::path::PathBuf;

use rustix::fs::{FlockOperation, flock};

use super::files::{Access, SessionDir};

/// The lock file's name in its session's folder.
pub const LOCK: &str = "journal.lock";

/// Why a session cannot be held here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HoldError {
    /// Another process has it open.
    #[error(
        "session `{id}` is open in another acplb{}; close it there first (session/close, or quit that editor)",
        pid.map(|p| format!(" (process {p})")).unwrap_or_default()
    )]
    Elsewhere {
        /// The session id.
        id: String,
        /// The process holding it, when it said.
        pid: Option<u32>,
    },
    /// This process has it: it is still opening or closing.
    #[error("session `{id}` is still opening or closing in this acplb; try again in a moment")]
    Here {
        /// The session id.
        id: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock session `{id}` ({path}): {source}")]
    Io {
        /// The session id.
        id: String,
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// A session held by this process; dropping it (closing the file) lets it go.
#[derive(Debug)]
pub struct Hold {
    file: File,
}

impl Drop for Hold {
    fn drop(&mut self) {
        // No process id is left behind to name a holder that is gone; the lock itself goes
        // with the file, whatever this does.
        self.file.set_len(0).ok();
    }
}

impl SessionDir {
    /// Holds this session for this process, or says who has it. Never waits for the session;
    /// a refusal may wait a few milliseconds for the holder to write its process id. Blocking
    /// file I/O.
    pub fn hold(&self) -> Result<Hold, HoldError> {
        let io_error = |source| HoldError::Io {
            id: self.id().to_owned(),
            path: self.path().join(LOCK),
            source,
        };
        let mut file = self.file(LOCK, Access::ReadWriteCreate).map_err(io_error)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
                let pid = holder_soon(&mut file);
                let id = self.id().to_owned();
                return Err(if pid == Some(std::process::id()) {
                    HoldError::Here { id }
                } else {
                    HoldError::Elsewhere { id, pid }
                });
            }
            Err(e) => return Err(io_error(e.into())),
        }
        file.set_len(0)
            .and_then(|()| file.write_all(std::process::id().to_string().as_bytes()))
            .map_err(io_error)?;
        Ok(Hold { file })
    }
}

/// The holder's process id: it writes it just after it took the lock, so a refusal that comes
/// in between waits for it a little (until a live process is named, at most 100 ms).
fn holder_soon(file: &mut File) -> Option<u32> {
    for _ in 0..20 {
        if let Some(pid) = holder(file).filter(|pid| alive(*pid)) {
            return Some(pid);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    None
}

/// Whether process `pid` exists (a holder that crashed left its id behind).
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // Signal 0 checks the process is there without signalling it; `EPERM`: it is, not ours.
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// The process id the holder wrote (none if it has not yet, or wrote something else).
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

    #[test]
    fn one_holder_at_a_time_and_free_once_dropped() {
        let root = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(root.path(), ID).unwrap();
        let held = dir.hold().unwrap();
        // A second open file description conflicts even in this process: the lock is not
        // per process, so it also keeps out a second open here.
        let again = SessionDir::open(root.path(), ID).unwrap();
        let e = again.hold().unwrap_err();
        assert!(matches!(e, HoldError::Here { .. }), "{e}");
        assert!(e.to_string().contains("still opening or closing"), "{e}");
        drop(held);
        let _held = again.hold().unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK)).unwrap();
        assert_eq!(text, std::process::id().to_string());
    }

    #[test]
    fn another_process_is_named() {
        let root = tempfile::tempdir().unwrap();
        let dir = SessionDir::create(root.path(), ID).unwrap();
        let held = dir.hold().unwrap();
        // A live process that is not this one.
        std::fs::write(dir.path().join(LOCK), "1").unwrap();
        let e = dir.hold().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "session `{ID}` is open in another acplb (process 1); close it there first (session/close, or quit that editor)"
            )
        );
        // The id a crashed holder left behind names nobody.
        // (No process has the largest pid: `pid_max` is far below it. Spawning one to wait for
        // would lend the lock file to the child until its exec.)
        std::fs::write(dir.path().join(LOCK), i32::MAX.to_string()).unwrap();
        let e = dir.hold().unwrap_err();
        assert!(matches!(e, HoldError::Elsewhere { pid: None, .. }), "{e}");
        drop(held);
        assert_eq!(
            std::fs::read(dir.path().join(LOCK)).unwrap(),
            b"",
            "the id is cleared"
        );
    }
}
