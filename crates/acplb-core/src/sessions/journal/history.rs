//! Reading a journal back: every record in order, what the session was set to, its thread, its
//! title; a torn last line (acplb killed mid-write) is skipped, a damaged line elsewhere or a
//! line over the cap is skipped and reported. It is read a piece at a time, never whole.

use std::io::Read;
use std::path::{Path, PathBuf};

use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema::{ContentBlock, SessionConfigOptionValue, SessionUpdate};

use super::lines::{Lines, MAX_LINE};
use super::record::{FORMAT, Record};
use crate::sessions::files::{Access, JOURNAL, SessionDir};
use crate::sessions::state;
use crate::transport::Frame;

/// Why a journal cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// No such session.
    #[error("no session `{id}` is kept here ({path} does not exist)")]
    Missing {
        /// The session id.
        id: String,
        /// The journal path looked at.
        path: PathBuf,
    },
    /// The session's folder could not be opened (a link, say).
    #[error("cannot open the session folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file could not be read.
    #[error("cannot read the journal {path}: {source}")]
    Io {
        /// The journal path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The first line is not a journal header.
    #[error("{path} is not an acplb session journal (its first line is not a header{detail})")]
    NotAJournal {
        /// The journal path.
        path: PathBuf,
        /// More about the first line.
        detail: String,
    },
    /// Written by a newer acplb.
    #[error("{path} was written by a newer acplb (journal format {found}; this acplb reads {FORMAT})")]
    Newer {
        /// The journal path.
        path: PathBuf,
        /// The format found.
        found: u32,
    },
    /// The rendered text could not be written (`follow`'s output was closed).
    #[error("cannot write the journal's text: {0}")]
    Output(#[source] std::io::Error),
}

/// A journal as read.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// The session id from the header.
    pub session_id: String,
    /// The working directory from the header.
    pub cwd: PathBuf,
    /// When the session started.
    pub started_at: String,
    /// The `_meta` its provider keeps (from the header).
    pub meta: serde_json::Map<String, serde_json::Value>,
    /// Every record after the header, in order.
    pub records: Vec<Record>,
    /// Lines skipped, with why (a torn last line, damage).
    pub skipped: Vec<String>,
}

/// What a history says about the session's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The last thread id recorded.
    pub thread_id: Option<String>,
    /// The last mode recorded.
    pub mode: Option<String>,
    /// Mode and config option changes, in order (a mode change as the `mode` option).
    pub settings: Vec<(String, SessionConfigOptionValue)>,
    /// The number of the last turn started.
    pub turns: u64,
    /// A turn that started and never ended (acplb stopped mid-turn), if any.
    pub open_turn: Option<u64>,
    /// The title: the provider's, else the first prompt's first line.
    pub title: Option<String>,
    /// The time of the last record that carries one.
    pub updated_at: Option<String>,
}

/// Reads the journal of session `id` under the state directory `state` (blocking): a session
/// folder or journal that is a link, or a journal that is not a regular file, is refused.
pub fn read(state: &Path, id: &str) -> Result<History, JournalError> {
    let dir = SessionDir::open(state, id).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => JournalError::Missing {
            id: id.to_owned(),
            path: state::journal_path(state, id),
        },
        _ => JournalError::Folder {
            path: state::session_dir(state, id),
            source,
        },
    })?;
    read_in(&dir)
}

/// Reads the journal in the session folder `dir` (blocking), a piece at a time: it is never
/// held whole, and a line over [`MAX_LINE`] is skipped unread and reported.
pub fn read_in(dir: &SessionDir) -> Result<History, JournalError> {
    let path = dir.journal_path();
    let file = dir
        .file(JOURNAL, Access::Read)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => JournalError::Missing {
                id: dir.id().to_owned(),
                path: path.clone(),
            },
            _ => JournalError::Io {
                path: path.clone(),
                source,
            },
        })?;
    from_reader(&path, file, MAX_LINE)
}

/// Parses journal bytes (`path` names them in errors).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<History, JournalError> {
    from_reader(path, bytes, MAX_LINE)
}

/// Reads a journal from `input` a piece at a time, lines over `cap` skipped.
pub(super) fn from_reader(path: &Path, mut input: impl Read, cap: usize) -> Result<History, JournalError> {
    let mut lines = Lines::new(cap);
    let mut reading = Reading {
        path,
        lines: 0,
        cap,
        history: None,
    };
    loop {
        let read = lines.read_from(&mut input).map_err(|source| JournalError::Io {
            path: path.to_owned(),
            source,
        })?;
        while let Some(line) = lines.next_line() {
            reading.line(line, false)?;
        }
        if read == 0 {
            break;
        }
    }
    if let Some(last) = lines.rest() {
        reading.line(last, true)?;
    }
    match reading.history {
        Some(history) => Ok(history),
        // An empty file: its (missing) header says why it is not a journal.
        None => header(path, b""),
    }
}

/// A journal being read line by line.
struct Reading<'a> {
    path: &'a Path,
    lines: usize,
    cap: usize,
    history: Option<History>,
}

impl Reading<'_> {
    /// Takes the next line; `last` when the file ended before its newline.
    fn line(&mut self, line: Frame, last: bool) -> Result<(), JournalError> {
        self.lines += 1;
        let n = self.lines;
        let Some(history) = self.history.as_mut() else {
            self.history = Some(match &line {
                Frame::Line(text) => header(self.path, text.as_bytes())?,
                Frame::NotUtf8 { lossy, .. } => header(self.path, lossy.as_bytes())?,
                Frame::Oversized { .. } => return Err(not_a_journal(self.path, &too_long_detail(self.cap))),
            });
            return Ok(());
        };
        let text = match line {
            Frame::Line(text) if text.is_empty() => return Ok(()),
            Frame::Line(text) => text,
            Frame::NotUtf8 { valid_up_to, .. } => {
                history
                    .skipped
                    .push(format!("line {n}: not UTF-8 (byte {valid_up_to})"));
                return Ok(());
            }
            Frame::Oversized { bytes } => {
                history.skipped.push(too_long(n, bytes, self.cap));
                return Ok(());
            }
        };
        match serde_json::from_str::<Record>(&text) {
            Ok(record) => history.records.push(record),
            Err(_) if last => history
                .skipped
                .push(format!("line {n}: cut short (acplb stopped while writing it)")),
            Err(e) => history.skipped.push(format!("line {n}: {e}")),
        }
        Ok(())
    }
}

/// How line `n`, of `bytes` bytes, over the `cap`, is reported.
pub(super) fn too_long(n: usize, bytes: usize, cap: usize) -> String {
    format!(
        "line {n}: {bytes} bytes, over the {} line limit (not read)",
        size(cap)
    )
}

/// Why a first line over the `cap` is no header.
pub(super) fn too_long_detail(cap: usize) -> String {
    format!(": it is over the {} line limit", size(cap))
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes}-byte")
    }
}

/// A history holding only what the header line `line` says (`path` names it in errors).
pub(super) fn header(path: &Path, line: &[u8]) -> Result<History, JournalError> {
    match serde_json::from_slice::<Record>(line) {
        Ok(Record::Open {
            format,
            session_id,
            cwd,
            at,
            meta,
        }) => {
            if format > FORMAT {
                return Err(JournalError::Newer {
                    path: path.to_owned(),
                    found: format,
                });
            }
            Ok(History {
                session_id,
                cwd,
                started_at: at,
                meta,
                ..History::default()
            })
        }
        Ok(_) => Err(not_a_journal(path, ": it is another record")),
        Err(e) => Err(not_a_journal(path, &format!(": {e}"))),
    }
}

pub(super) fn not_a_journal(path: &Path, detail: &str) -> JournalError {
    JournalError::NotAJournal {
        path: path.to_owned(),
        detail: detail.to_owned(),
    }
}

impl History {
    /// What the records say about the session.
    pub fn facts(&self) -> Facts {
        let mut facts = Facts {
            updated_at: Some(self.started_at.clone()),
            ..Facts::default()
        };
        let mut first_line = None;
        for record in &self.records {
            match record {
                Record::Prompt {
                    turn,
                    at,
                    prompt,
                    steered,
                } => {
                    if !steered {
                        facts.turns = facts.turns.max(*turn);
                        facts.open_turn = Some(*turn);
                    }
                    facts.updated_at = Some(at.clone());
                    if first_line.is_none() {
                        first_line = first_text_line(prompt);
                    }
                }
                Record::TurnEnd { turn, at, .. } => {
                    if facts.open_turn == Some(*turn) {
                        facts.open_turn = None;
                    }
                    facts.updated_at = Some(at.clone());
                }
                Record::Reopened { at } => facts.updated_at = Some(at.clone()),
                Record::Thread { id } => facts.thread_id = Some(id.clone()),
                Record::Mode { id } => {
                    facts.mode = Some(id.clone());
                    // Applied in order with the options, of which the mode is one.
                    let value = SessionConfigOptionValue::value_id(id.clone());
                    facts.settings.push(("mode".into(), value));
                }
                Record::Setting { id, value } => facts.settings.push((id.clone(), value.clone())),
                Record::Update { u } => {
                    if let SessionUpdate::SessionInfoUpdate(info) = u.as_ref() {
                        match &info.title {
                            MaybeUndefined::Value(t) => facts.title = Some(t.clone()),
                            MaybeUndefined::Null => facts.title = None,
                            MaybeUndefined::Undefined => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if facts.title.is_none() {
            facts.title = first_line;
        }
        facts
    }
}

/// The first non-empty line of a prompt's text, at most 100 characters.
pub fn first_text_line(prompt: &[ContentBlock]) -> Option<String> {
    prompt.iter().find_map(|block| match block {
        ContentBlock::Text(t) => t.text.lines().map(str::trim).find(|l| !l.is_empty()).map(|l| {
            let mut line: String = l.chars().take(100).collect();
            if line.len() < l.len() {
                line.push('…');
            }
            line
        }),
        _ => None,
    })
}
