//! Appending to a session's journal.
//!
//! Each record is one `write(2)` of a whole line to a file opened `O_APPEND`, from the session's
//! own thread, with no fsync: once the call returns the line is in the kernel's page cache, so
//! a SIGKILL of acplb loses at most the record being written, never the file (a torn last line
//! is skipped on read). A power loss may lose the last seconds; that is the durability chosen
//! (ADR 0012), because an fsync per update would cost milliseconds on the hot path.
//!
//! Past the size limit, updates are left out (one [`Record::Gap`] says so); prompts, turn ends
//! and settings are still written, so the conversation's shape survives.

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ContentBlock, SessionConfigOptionValue, SessionUpdate};
use serde::Serialize;

use super::record::{FORMAT, Record, RecordRef, now};
use crate::sessions::state;

/// The default size limit of one journal (256 MiB).
pub const DEFAULT_LIMIT: u64 = 256 << 20;

/// A session's journal, open for appending. A journal that could not be opened, or that a
/// write failed on, logs once and then writes nothing: the session goes on without it.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: RefCell<Option<File>>,
    buf: RefCell<Vec<u8>>,
    written: Cell<u64>,
    limit: u64,
    gap: Cell<bool>,
    thread: RefCell<Option<String>>,
}

impl Journal {
    /// Creates the journal of a new session (its folder `0700`, the file `0600`) and writes its
    /// first line. Blocking: call it off the runtime thread.
    pub fn create(state: &Path, session_id: &str, cwd: &Path, limit: u64) -> io::Result<Self> {
        state::check_session_id(session_id).map_err(io::Error::other)?;
        state::create_private_dir(&state::session_dir(state, session_id))?;
        let path = state::journal_path(state, session_id);
        let file = state::open_private_append(&path)?;
        let journal = Self::with_file(path, file, 0, limit, None);
        journal.write(&Record::Open {
            format: FORMAT,
            session_id: session_id.to_owned(),
            cwd: cwd.to_owned(),
            at: now(),
        });
        Ok(journal)
    }

    /// Opens an existing journal to go on appending (after a load or resume); `thread` is the
    /// thread id it last recorded. Blocking.
    pub fn reopen(path: &Path, limit: u64, thread: Option<String>) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new().append(true).open(path)?;
        let size = file.metadata()?.len();
        let journal = Self::with_file(path.to_owned(), file, size, limit, thread);
        journal.write(&Record::Reopened { at: now() });
        Ok(journal)
    }

    fn with_file(path: PathBuf, file: File, written: u64, limit: u64, thread: Option<String>) -> Self {
        Self {
            path,
            file: RefCell::new(Some(file)),
            buf: RefCell::new(Vec::with_capacity(4096)),
            written: Cell::new(written),
            limit,
            gap: Cell::new(false),
            thread: RefCell::new(thread),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its size in bytes: everything written so far is in the file's first `bytes()` bytes.
    pub fn bytes(&self) -> u64 {
        self.written.get()
    }

    /// Records one update the editor got (the hot path).
    pub fn update(&self, update: &SessionUpdate) {
        if self.written.get() >= self.limit {
            if !self.gap.replace(true) {
                self.write(&Record::Gap { limit: self.limit });
            }
            return;
        }
        self.write(&RecordRef::Update { u: update });
    }

    /// Records a prompt as sent.
    pub fn prompt(&self, turn: u64, prompt: &[ContentBlock], steered: bool) {
        self.write(&Record::Prompt {
            turn,
            at: now(),
            prompt: prompt.to_vec(),
            steered,
        });
    }

    /// Records the end of a turn.
    pub fn turn_end(&self, turn: u64, stop: &str, error: Option<String>) {
        self.write(&Record::TurnEnd {
            turn,
            at: now(),
            stop: stop.to_owned(),
            error,
        });
    }

    /// Records the provider's thread id, when it is new.
    pub fn thread(&self, id: &str) {
        if self.thread.borrow().as_deref() == Some(id) {
            return;
        }
        *self.thread.borrow_mut() = Some(id.to_owned());
        self.write(&Record::Thread { id: id.to_owned() });
    }

    /// Records a mode change.
    pub fn mode(&self, id: &str) {
        self.write(&Record::Mode { id: id.to_owned() });
    }

    /// Records a config option change.
    pub fn setting(&self, id: &str, value: &SessionConfigOptionValue) {
        self.write(&Record::Setting {
            id: id.to_owned(),
            value: value.clone(),
        });
    }

    /// Appends records as they are (the interrupted-turn repair).
    pub fn records(&self, records: &[Record]) {
        for record in records {
            self.write(record);
        }
    }

    fn write<T: Serialize>(&self, record: &T) {
        let mut file = self.file.borrow_mut();
        let Some(f) = file.as_mut() else {
            return;
        };
        let mut buf = self.buf.borrow_mut();
        buf.clear();
        if let Err(e) = serde_json::to_writer(&mut *buf, record) {
            tracing::warn!(error = %e, "a journal record could not be encoded; left out");
            return;
        }
        buf.push(b'\n');
        match f.write_all(&buf) {
            Ok(()) => self.written.set(self.written.get() + buf.len() as u64),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "writing the session journal failed; it stops here");
                *file = None;
            }
        }
    }
}
