//! Taking messages out of a queue: listing what waits, claiming the oldest by a rename that only
//! one consumer can win, setting damaged files (and anything that is not a regular file) aside,
//! and taking back claims whose consumer died.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::claimed::Claimed;
use super::error::Damage;
use super::message::{FileKind, Message, MessageId, OrderKey, bad_name, claimed_name, pending_name};
use super::read::{Access, Unread, open_regular, read_limited, read_message};
use super::{QueueError, check_target, queue_dir};
use crate::sessions::state::create_private_dir;

/// One target's queue, seen by a consumer. Blocking file I/O throughout: on the runtime thread,
/// call it through `spawn_blocking`.
#[derive(Debug)]
pub struct Queue {
    dir: PathBuf,
    /// Pending files of the latest scan, oldest first, not yet tried.
    batch: VecDeque<Candidate>,
}

/// A pending file found by a scan, with what it is ordered by (`None`: unreadable, so tried
/// first, to be set aside).
#[derive(Debug)]
struct Candidate {
    key: Option<SystemTime>,
    id: MessageId,
}

/// The outcome of trying to claim one file.
enum Attempt {
    Won(Claimed),
    /// Another consumer claimed it first, or its file was damaged and set aside.
    Gone,
}

impl Queue {
    /// The queue of `target` under the state dir `state`; its folder is created (`0700`).
    pub fn open(state: &Path, target: &str) -> Result<Self, QueueError> {
        check_target(target)?;
        let dir = queue_dir(state, target);
        create_private_dir(&dir).map_err(|e| QueueError::io("create", &dir, e))?;
        Ok(Self {
            dir,
            batch: VecDeque::new(),
        })
    }

    /// The queue's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The messages waiting (`<uuid>.json`), oldest first (by `sentAt`, then id). Damaged or
    /// unreadable files are skipped with a warning (the next claim sets damaged ones aside);
    /// temporary, claimed and other files are not messages waiting. Never blocks on a FIFO.
    pub fn pending(&self) -> Result<Vec<Message>, QueueError> {
        self.read_all(|kind| match kind {
            FileKind::Pending(id) => Some(id),
            _ => None,
        })
    }

    /// The messages a consumer has claimed and not yet settled (`<uuid>.claimed`), oldest first.
    pub fn claimed(&self) -> Result<Vec<Message>, QueueError> {
        self.read_all(|kind| match kind {
            FileKind::Claimed(id) => Some(id),
            _ => None,
        })
    }

    /// Claims the oldest waiting message, or `None` when nothing waits. The claim is the rename
    /// `<uuid>.json` → `<uuid>.claimed`: of consumers racing for one file, exactly one rename
    /// succeeds, the others see it gone and try the next file. A damaged file is renamed to
    /// `<uuid>.bad` (with a warning) and the next one tried; so is anything named like a
    /// message that is not a regular file. A file that cannot be claimed for another reason
    /// (its permissions, say) is skipped with a warning: it never keeps the others waiting.
    ///
    /// "Oldest" is within the latest scan of the folder: a scan reads every waiting file's
    /// `sentAt` once, and later calls work through it before scanning again, so claiming `n`
    /// messages costs `n` reads, not `n²`. A scan is repeated only after one of its files went
    /// (another consumer took it, or it was set aside), so skipped files never make it spin.
    pub fn claim_next(&mut self) -> Result<Option<Claimed>, QueueError> {
        let mut went = true;
        while went || !self.batch.is_empty() {
            if self.batch.is_empty() {
                went = false;
                self.batch = self.scan()?;
            }
            while let Some(candidate) = self.batch.pop_front() {
                match self.attempt(candidate.id) {
                    Ok(Attempt::Won(claimed)) => return Ok(Some(claimed)),
                    Ok(Attempt::Gone) => went = true,
                    Err(e) => {
                        let cause = std::error::Error::source(&e).map(ToString::to_string);
                        tracing::warn!(cause = cause.unwrap_or_default(), "skipped a queue message: {e}");
                    }
                }
            }
        }
        Ok(None)
    }

    /// Puts claims older than `older_than` back (`<uuid>.claimed` → `<uuid>.json`): their
    /// consumer died between claim and settlement. Returns how many were put back. Temporary
    /// files older than that (a sender that died mid-write) are removed.
    ///
    /// A claim's age is its file's modification time, which the claim sets; pick `older_than`
    /// longer than any delivery takes, or a slow delivery is taken back while it runs and the
    /// message may then be delivered twice at once.
    pub fn recover_stale(&self, older_than: Duration) -> Result<usize, QueueError> {
        self.recover(older_than, older_than)
    }

    /// Puts every claim back, whatever its age; temporary files are only removed past
    /// `temp_older_than` (a sender may be writing one now). Only for a consumer that knows it
    /// is the queue's one consumer, so every claim there was left by a predecessor that died:
    /// an editor session's queue, which only the acplb that has the session open consumes.
    pub fn take_back_claims(&self, temp_older_than: Duration) -> Result<usize, QueueError> {
        self.recover(Duration::ZERO, temp_older_than)
    }

    /// Claims older than `claims` go back, temporary files older than `temps` go. A file that
    /// cannot be moved or removed is skipped with a warning, so it never blocks the others; a
    /// temporary name on anything but a regular file is left alone.
    fn recover(&self, claims: Duration, temps: Duration) -> Result<usize, QueueError> {
        let now = SystemTime::now();
        let mut recovered = 0;
        for (name, kind) in self.entries()? {
            let path = self.dir.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue; // settled or recovered meanwhile
            };
            if matches!(kind, FileKind::Temp) && !meta.is_file() {
                continue;
            }
            let Ok(modified) = meta.modified() else { continue };
            let age = now.duration_since(modified).unwrap_or_default();
            let limit = if matches!(kind, FileKind::Temp) {
                temps
            } else {
                claims
            };
            if !limit.is_zero() && age <= limit {
                continue;
            }
            match kind {
                FileKind::Claimed(id) => {
                    let back = self.dir.join(pending_name(id));
                    match std::fs::rename(&path, &back) {
                        Ok(()) => {
                            tracing::warn!(%id, dir = %self.dir.display(), "took back a stale claim");
                            recovered += 1;
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => {
                            tracing::warn!(file = %path.display(), error = %e, "cannot take back a claim");
                        }
                    }
                }
                FileKind::Temp => match std::fs::remove_file(&path) {
                    Ok(()) => tracing::debug!(file = %path.display(), "removed an abandoned temp file"),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => tracing::warn!(file = %path.display(), error = %e, "cannot remove a temp file"),
                },
                FileKind::Pending(_) => {}
            }
        }
        Ok(recovered)
    }

    /// The names of the queue's files that are messages, temp files or claims.
    fn entries(&self) -> Result<Vec<(String, FileKind)>, QueueError> {
        let read = match std::fs::read_dir(&self.dir) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(QueueError::io("list", &self.dir, e)),
        };
        let mut out = Vec::new();
        for entry in read {
            let entry = entry.map_err(|e| QueueError::io("list", &self.dir, e))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if let Some(kind) = FileKind::of(&name) {
                out.push((name, kind));
            }
        }
        Ok(out)
    }

    /// The waiting files, in claim order: unreadable ones first (to be set aside), then oldest.
    fn scan(&self) -> Result<VecDeque<Candidate>, QueueError> {
        let mut found = Vec::new();
        for (name, kind) in self.entries()? {
            let FileKind::Pending(id) = kind else {
                continue;
            };
            let key = match read_limited(&self.dir.join(name)) {
                Ok(bytes) => serde_json::from_slice::<OrderKey>(&bytes).ok().map(|k| k.sent_at),
                Err(Unread::Gone) => continue,
                Err(Unread::Damaged(_) | Unread::Io(_)) => None,
            };
            found.push(Candidate { key, id });
        }
        found.sort_by_key(|c| (c.key, c.id));
        Ok(found.into())
    }

    /// Tries to claim message `id`. Touching the file first gives the claim a fresh
    /// modification time from the instant it exists (the rename keeps it), so
    /// [`Queue::recover_stale`] never mistakes a new claim for an old one. What is not a
    /// regular file is set aside before the rename; the read after it checks again (with
    /// `fstat` on what it opened), so a swap in between is set aside too.
    fn attempt(&self, id: MessageId) -> Result<Attempt, QueueError> {
        let pending = self.dir.join(pending_name(id));
        match open_regular(&pending, Access::Touch) {
            Ok(f) => {
                f.set_modified(SystemTime::now())
                    .map_err(|e| QueueError::io("touch", &pending, e))?;
            }
            Err(Unread::Gone) => return Ok(Attempt::Gone),
            Err(Unread::Damaged(damage)) => {
                self.set_aside(&pending, id, &damage)?;
                return Ok(Attempt::Gone);
            }
            Err(Unread::Io(e)) => return Err(QueueError::io("open", pending, e)),
        }
        let claimed = self.dir.join(claimed_name(id));
        match std::fs::rename(&pending, &claimed) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Attempt::Gone),
            Err(e) => return Err(QueueError::io("rename", pending, e)),
        }
        match read_message(&claimed, id) {
            Ok(message) => Ok(Attempt::Won(Claimed::new(&self.dir, message))),
            Err(Unread::Gone) => Ok(Attempt::Gone), // recovered as stale at once: not ours
            Err(Unread::Io(e)) => Err(QueueError::io("read", claimed, e)),
            Err(Unread::Damaged(damage)) => {
                self.set_aside(&claimed, id, &damage)?;
                Ok(Attempt::Gone)
            }
        }
    }

    /// Moves a damaged file (claimed, or still pending when it is no regular file) to
    /// `<uuid>.bad`, so it is never tried again. Gone already: another consumer moved it.
    fn set_aside(&self, path: &Path, id: MessageId, damage: &Damage) -> Result<(), QueueError> {
        let bad = self.dir.join(bad_name(id));
        match std::fs::rename(path, &bad) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(QueueError::io("rename", path, e)),
        }
        tracing::warn!(file = %bad.display(), "set aside a damaged queue message: {damage}");
        Ok(())
    }

    /// Every message of one kind, oldest first; damaged or unreadable ones skipped with a
    /// warning.
    fn read_all(&self, wanted: impl Fn(FileKind) -> Option<MessageId>) -> Result<Vec<Message>, QueueError> {
        let mut out = Vec::new();
        for (name, kind) in self.entries()? {
            let Some(id) = wanted(kind) else { continue };
            let path = self.dir.join(name);
            match read_message(&path, id) {
                Ok(m) => out.push(m),
                Err(Unread::Gone) => {}
                Err(Unread::Io(e)) => {
                    tracing::warn!(file = %path.display(), error = %e, "skipped an unreadable queue message");
                }
                Err(Unread::Damaged(damage)) => {
                    tracing::warn!(file = %path.display(), "skipped a damaged queue message: {damage}");
                }
            }
        }
        out.sort_by_key(Message::order_key);
        Ok(out)
    }
}
