//! Appending to a session's journal.
//!
//! Each record is one `write(2)` of a whole line to a file opened `O_APPEND`, from the session's
//! own thread, with no fsync: once the call returns the line is in the kernel's page cache, so
//! a SIGKILL of acplb loses at most the record being written, never the file (a torn last line
//! is skipped on read). A power loss may lose the last seconds; that is the durability chosen
//! (ADR 0012), because an fsync per update would cost milliseconds on the hot path.
//!
//! Past the size limit, updates are left out (one [`Record::Gap`] says so); prompts, turn ends
//! and settings are still written, so the conversation's shape survives. A record that cannot
//! be written is lost, not the journal: the next record tries again (`loss.rs`, ADR 0015).

use std::cell::{Cell, RefCell};
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{ContentBlock, SessionConfigOptionValue, SessionUpdate};
use serde::Serialize;

use super::lines::MAX_LINE;
use super::loss::{JournalNews, Listener, Loss};
use super::record::{FORMAT, Record, RecordRef, now};
use crate::sessions::files::{Access, JOURNAL, SessionDir};
use crate::sessions::hold::Hold;

/// The default size limit of one journal (256 MiB).
pub const DEFAULT_LIMIT: u64 = 256 << 20;

/// A session's journal, open for appending, and the hold on its session (ADR 0015): while it is
/// open no other process can open the session.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: RefCell<File>,
    buf: RefCell<Vec<u8>>,
    /// The bytes in the file: every write that worked, from the size it had when opened.
    written: Cell<u64>,
    limit: u64,
    /// The longest line written ([`MAX_LINE`], which readers skip past).
    line_limit: usize,
    gap: Cell<bool>,
    thread: RefCell<Option<String>>,
    loss: Loss,
    _hold: Hold,
}

impl Journal {
    /// Creates the journal of a new session (its folder `0700`, the file `0600`), holds the
    /// session, and writes its first line. Blocking: call it off the runtime thread.
    pub fn create(state: &Path, session_id: &str, cwd: &Path, limit: u64) -> io::Result<Self> {
        Self::create_keeping(state, session_id, cwd, limit, serde_json::Map::new())
    }

    /// [`Journal::create`], the first line also keeping `meta` (the `_meta` keys of
    /// `session/new` its provider keeps with the session).
    pub fn create_keeping(
        state: &Path,
        session_id: &str,
        cwd: &Path,
        limit: u64,
        meta: serde_json::Map<String, serde_json::Value>,
    ) -> io::Result<Self> {
        let dir = SessionDir::create(state, session_id)?;
        let hold = dir.hold().map_err(io::Error::other)?;
        let file = dir.file(JOURNAL, Access::Append { create: true })?;
        let journal = Self::with_file(&dir, file, hold, limit, None)?;
        journal.write(&Record::Open {
            format: FORMAT,
            session_id: session_id.to_owned(),
            cwd: cwd.to_owned(),
            at: now(),
            meta,
        });
        Ok(journal)
    }

    /// Opens the existing journal in `dir` to go on appending (after a load or resume), for
    /// the process holding the session (`hold`); `thread` is the thread id it last recorded.
    /// Blocking.
    pub fn reopen(dir: &SessionDir, hold: Hold, limit: u64, thread: Option<String>) -> io::Result<Self> {
        let file = dir.file(JOURNAL, Access::Append { create: false })?;
        let journal = Self::with_file(dir, file, hold, limit, thread)?;
        journal.loss.torn.set(!ends_a_line(dir)?);
        journal.write(&Record::Reopened { at: now() });
        Ok(journal)
    }

    /// Opens the existing journal in `dir` to add a record to a session no process has open
    /// (a title set from outside: `session/set_title`), for the caller holding it (`hold`);
    /// unlike [`Journal::reopen`] it writes no `reopened` line. Blocking.
    pub fn amend(dir: &SessionDir, hold: Hold, limit: u64) -> io::Result<Self> {
        let file = dir.file(JOURNAL, Access::Append { create: false })?;
        let journal = Self::with_file(dir, file, hold, limit, None)?;
        journal.loss.torn.set(!ends_a_line(dir)?);
        Ok(journal)
    }

    fn with_file(
        dir: &SessionDir,
        file: File,
        hold: Hold,
        limit: u64,
        thread: Option<String>,
    ) -> io::Result<Self> {
        let size = file.metadata()?.len();
        Ok(Self {
            path: dir.journal_path(),
            file: RefCell::new(file),
            buf: RefCell::new(Vec::with_capacity(4096)),
            written: Cell::new(size),
            limit,
            line_limit: MAX_LINE,
            gap: Cell::new(false),
            thread: RefCell::new(thread),
            loss: Loss::default(),
            _hold: hold,
        })
    }

    /// From now on `listener` hears when records start being lost and when writing works
    /// again (it is told at once if records are being lost now). It must not write to this
    /// journal.
    pub fn listen(&self, listener: Listener) {
        self.loss.listen(listener);
    }

    /// How many records were lost or left out since the journal was opened.
    pub fn lost(&self) -> u64 {
        self.loss.total()
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

    /// The provider's thread id it last recorded, if any.
    pub fn thread_id(&self) -> Option<String> {
        self.thread.borrow().clone()
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
        let news = {
            let mut buf = self.buf.borrow_mut();
            buf.clear();
            self.encode(&mut buf, record);
            self.put(&buf)
        };
        // Told with nothing borrowed: the listener may do what it likes but write here.
        if let Some(news) = news {
            self.loss.tell(news);
        }
    }

    /// Puts `record` into `buf` as a line, after the mark of the records lost before it; a
    /// record that cannot be encoded or is over the line limit is left out, marked in its place.
    fn encode<T: Serialize>(&self, buf: &mut Vec<u8>, record: &T) {
        if self.loss.torn.get() {
            // The file ends in part of a line (a write failed midway and could not be cut off,
            // or acplb was killed while writing it): end that line first, so it reads as one
            // damaged line and this one as whole.
            buf.push(b'\n');
        }
        if let Some((count, error)) = self.loss.pending() {
            line(
                buf,
                &Record::Lost {
                    count,
                    error,
                    at: now(),
                },
            );
        }
        let start = buf.len();
        let left_out = match serde_json::to_writer(&mut *buf, record) {
            Err(e) => Some(format!("a record could not be encoded: {e}")),
            Ok(()) if buf.len() - start > self.line_limit => Some(format!(
                "a record of {} bytes is over the line limit of {} bytes",
                buf.len() - start,
                self.line_limit
            )),
            Ok(()) => None,
        };
        match left_out {
            None => buf.push(b'\n'),
            Some(why) => {
                tracing::warn!(path = %self.path.display(), "{why}; left out of the journal");
                buf.truncate(start);
                self.loss.left_out();
                let lost = Record::Lost {
                    count: 1,
                    error: why,
                    at: now(),
                };
                line(buf, &lost);
            }
        }
    }

    /// Appends `bytes`; what the session should hear about it, if anything.
    fn put(&self, bytes: &[u8]) -> Option<JournalNews> {
        match self.append(bytes) {
            Ok(()) => {
                self.written.set(self.written.get() + bytes.len() as u64);
                self.loss.torn.set(false);
                let news = self.loss.written();
                if let Some(JournalNews::Recovered { lost }) = &news {
                    tracing::info!(path = %self.path.display(), lost, "the session journal is written again");
                }
                news
            }
            Err(e) => {
                let news = self.loss.failed(&e);
                if news.is_some() {
                    tracing::warn!(path = %self.path.display(), error = %e, "a session journal record could not be written; trying again with the next one");
                }
                news
            }
        }
    }

    /// One `write(2)` of `bytes` as a rule (more only when the kernel takes part of them). A
    /// write that fails midway is cut off again, so the file ends with a whole line.
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let mut file = self.file.borrow_mut();
        let mut done = 0;
        while done < bytes.len() {
            let e = match file.write(&bytes[done..]) {
                Ok(0) => io::Error::from(io::ErrorKind::WriteZero),
                Ok(n) => {
                    done += n;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => e,
            };
            if done > 0 && file.set_len(self.written.get()).is_err() {
                self.loss.torn.set(true);
            }
            return Err(e);
        }
        Ok(())
    }
}

/// Whether the journal in `dir` is empty or ends with a newline (not with a line cut short).
fn ends_a_line(dir: &SessionDir) -> io::Result<bool> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = dir.file(JOURNAL, Access::Read)?;
    if file.seek(SeekFrom::End(0))? == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Encodes `record` into `buf` as one line (a record of acplb's own, which always encodes).
fn line(buf: &mut Vec<u8>, record: &Record) {
    if serde_json::to_writer(&mut *buf, record).is_ok() {
        buf.push(b'\n');
    }
}

#[cfg(test)]
mod tests;
