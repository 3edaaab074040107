//! What can go wrong with the input queue; every message names the target or the file.

use std::io;
use std::path::PathBuf;

/// An error of the input queue.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// The target is neither a session id nor a worker identity (`name@team`).
    #[error("`{target}` is not a queue target: {reason}")]
    BadTarget {
        /// The target as given (cut to 200 characters).
        target: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The message has no text (or only white space).
    #[error("the message is empty")]
    Empty,
    /// The message's text is over [`MAX_TEXT_BYTES`](super::MAX_TEXT_BYTES).
    #[error("the message is {bytes} bytes, more than the {max} bytes a queue message may hold")]
    TooLarge {
        /// Its size in bytes (of UTF-8).
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The sender's name is too long or holds control characters.
    #[error("`{from}` cannot be a sender's name: {reason}")]
    BadSender {
        /// The name as given (cut to 200 characters).
        from: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A file or folder of the queue could not be read, written, renamed or removed.
    #[error("failed to {action} `{}`", path.display())]
    Io {
        /// What was being done (`write`, `rename`, `read`, ...).
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A claim was taken back before it was settled (a stale-claim recovery judged its consumer
    /// dead): the message is pending again and may be delivered once more.
    #[error("the claim `{}` is gone: it was recovered as stale, so the message may be delivered again", path.display())]
    ClaimLost {
        /// The claimed file that was expected.
        path: PathBuf,
    },
    /// The queue folder could not be watched.
    #[error("failed to watch `{}`", path.display())]
    Watch {
        /// The queue folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: notify::Error,
    },
}

impl QueueError {
    /// An I/O error while doing `action` to `path`.
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Why a message file is damaged (set aside as `<uuid>.bad`, never retried).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Damage {
    #[error("not a regular file but {what}")]
    NotAFile { what: &'static str },
    #[error("larger than a message file may be ({max} bytes)")]
    FileTooLarge { max: u64 },
    #[error("not a queue message: {0}")]
    Json(#[from] serde_json::Error),
    #[error("its id `{inside}` is not the one its name gives")]
    IdMismatch { inside: String },
    #[error("{0}")]
    Invalid(QueueError),
}
