//! Taking messages out of a queue: listing what waits, claiming the oldest by a rename that only
//! one consumer can win, setting damaged files aside, and taking back claims whose consumer
//! died.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::claimed::Claimed;
use super::error::Damage;
use super::message::{
    FileKind, MAX_FILE_BYTES, Message, MessageId, OrderKey, bad_name, claimed_name, pending_name,
};
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

    /// The messages waiting (`<uuid>.json`), oldest first (by `sentAt`, then id). Damaged files
    /// are skipped with a warning (the next claim sets them aside); temporary, claimed and other
    /// files are not messages waiting.
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
    /// `<uuid>.bad` (with a warning) and the next one tried.
    ///
    /// "Oldest" is within the latest scan of the folder: a scan reads every waiting file's
    /// `sentAt` once, and later calls work through it before scanning again, so claiming `n`
    /// messages costs `n` reads, not `n²`.
    pub fn claim_next(&mut self) -> Result<Option<Claimed>, QueueError> {
        loop {
            if self.batch.is_empty() {
                self.batch = self.scan()?;
                if self.batch.is_empty() {
                    return Ok(None);
                }
            }
            while let Some(candidate) = self.batch.pop_front() {
                if let Attempt::Won(claimed) = self.attempt(candidate.id)? {
                    return Ok(Some(claimed));
                }
            }
        }
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

    /// Claims older than `claims` go back, temporary files older than `temps` go.
    fn recover(&self, claims: Duration, temps: Duration) -> Result<usize, QueueError> {
        let now = SystemTime::now();
        let mut recovered = 0;
        for (name, kind) in self.entries()? {
            let path = self.dir.join(&name);
            let Ok(modified) = std::fs::metadata(&path).and_then(|m| m.modified()) else {
                continue; // settled or recovered meanwhile
            };
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
                        Err(e) => return Err(QueueError::io("rename", path, e)),
                    }
                }
                FileKind::Temp => match std::fs::remove_file(&path) {
                    Ok(()) => tracing::debug!(file = %path.display(), "removed an abandoned temp file"),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(QueueError::io("remove", path, e)),
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
    /// [`Queue::recover_stale`] never mistakes a new claim for an old one.
    fn attempt(&self, id: MessageId) -> Result<Attempt, QueueError> {
        let pending = self.dir.join(pending_name(id));
        match File::options().write(true).open(&pending) {
            Ok(f) => {
                f.set_modified(SystemTime::now())
                    .map_err(|e| QueueError::io("touch", &pending, e))?;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Attempt::Gone),
            Err(e) => return Err(QueueError::io("open", pending, e)),
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

    /// Moves a damaged claimed file to `<uuid>.bad`, so it is never tried again.
    fn set_aside(&self, claimed: &Path, id: MessageId, damage: &Damage) -> Result<(), QueueError> {
        let bad = self.dir.join(bad_name(id));
        std::fs::rename(claimed, &bad).map_err(|e| QueueError::io("rename", claimed, e))?;
        tracing::warn!(file = %bad.display(), "set aside a damaged queue message: {damage}");
        Ok(())
    }

    /// Every message of one kind, oldest first; damaged ones skipped with a warning.
    fn read_all(&self, wanted: impl Fn(FileKind) -> Option<MessageId>) -> Result<Vec<Message>, QueueError> {
        let mut out = Vec::new();
        for (name, kind) in self.entries()? {
            let Some(id) = wanted(kind) else { continue };
            let path = self.dir.join(name);
            match read_message(&path, id) {
                Ok(m) => out.push(m),
                Err(Unread::Gone) => {}
                Err(Unread::Io(e)) => return Err(QueueError::io("read", path, e)),
                Err(Unread::Damaged(damage)) => {
                    tracing::warn!(file = %path.display(), "skipped a damaged queue message: {damage}");
                }
            }
        }
        out.sort_by_key(Message::order_key);
        Ok(out)
    }
}

/// Why a file was not read as a message.
enum Unread {
    /// It is no longer there (another consumer took it).
    Gone,
    /// It is damaged: too large, not JSON, not a message.
    Damaged(Damage),
    Io(io::Error),
}

fn read_message(path: &Path, id: MessageId) -> Result<Message, Unread> {
    let bytes = read_limited(path)?;
    Message::parse(&bytes, id).map_err(Unread::Damaged)
}

/// A file's bytes, refused past [`MAX_FILE_BYTES`] without reading them all.
fn read_limited(path: &Path) -> Result<Vec<u8>, Unread> {
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Unread::Gone,
        _ => Unread::Io(e),
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Unread::Damaged(Damage::FileTooLarge { max: MAX_FILE_BYTES }));
    }
    Ok(bytes)
}
