//! A message one consumer holds: it is delivered, then settled with `done` (delivered: the file
//! goes) or `release` (not delivered: it waits again).

use std::io;
use std::path::{Path, PathBuf};

use super::QueueError;
use super::message::{Message, claimed_name, pending_name};

/// A claimed message (`<uuid>.claimed`). Settle it with [`Claimed::done`] after delivery or
/// [`Claimed::release`] when it could not be delivered; dropping it unsettled releases it.
/// Blocking file I/O.
#[derive(Debug)]
#[must_use = "a claim is settled with `done` or `release`; dropped, it is released"]
pub struct Claimed {
    dir: PathBuf,
    message: Message,
    settled: bool,
}

impl Claimed {
    pub(super) fn new(dir: &Path, message: Message) -> Self {
        Self {
            dir: dir.to_owned(),
            message,
            settled: false,
        }
    }

    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The claimed file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(claimed_name(self.message.id))
    }

    /// The message was delivered: its file is deleted. [`QueueError::ClaimLost`] when the claim
    /// had been taken back as stale meanwhile (the message waits again and will be delivered
    /// once more).
    pub fn done(mut self) -> Result<(), QueueError> {
        self.settled = true;
        let path = self.path();
        std::fs::remove_file(&path).map_err(|e| lost_or_io("remove", path, e))
    }

    /// The message could not be delivered (the session is busy or gone): it waits again as
    /// `<uuid>.json`, for this consumer or another.
    pub fn release(mut self) -> Result<(), QueueError> {
        self.settled = true;
        self.put_back()
    }

    fn put_back(&self) -> Result<(), QueueError> {
        let path = self.path();
        let back = self.dir.join(pending_name(self.message.id));
        std::fs::rename(&path, back).map_err(|e| lost_or_io("rename", path, e))
    }
}

impl Drop for Claimed {
    /// An unsettled claim (an early return, a panic) goes back to waiting: at least once.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        match self.put_back() {
            Ok(()) => tracing::debug!(id = %self.message.id, "released an unsettled claim"),
            Err(e) => tracing::warn!("could not release an unsettled claim: {e}"),
        }
    }
}

fn lost_or_io(action: &'static str, path: PathBuf, e: io::Error) -> QueueError {
    if e.kind() == io::ErrorKind::NotFound {
        QueueError::ClaimLost { path }
    } else {
        QueueError::io(action, path, e)
    }
}
