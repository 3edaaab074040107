//! Reading a journal back: every record in order, what the session was set to, its thread, its
//! title; a torn last line (acplb killed mid-write) is skipped, a damaged line elsewhere is
//! skipped and reported.

use std::path::{Path, PathBuf};

use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema::{ContentBlock, SessionConfigOptionValue, SessionUpdate};

use super::record::{FORMAT, Record};

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

/// Reads the journal of session `id` at `path` (blocking).
pub fn read(id: &str, path: &Path) -> Result<History, JournalError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(JournalError::Missing {
                id: id.to_owned(),
                path: path.to_owned(),
            });
        }
        Err(source) => {
            return Err(JournalError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    parse(path, &bytes)
}

/// Parses journal bytes (`path` names them in errors).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<History, JournalError> {
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let count = lines.len();
    let mut history = header(path, lines.first().copied().unwrap_or_default())?;
    for (n, line) in lines.into_iter().enumerate().skip(1) {
        if line.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(record) => history.records.push(record),
            Err(_) if !complete && n + 1 == count => {
                history.skipped.push(format!(
                    "line {}: cut short (acplb stopped while writing it)",
                    n + 1
                ));
            }
            Err(e) => history.skipped.push(format!("line {}: {e}", n + 1)),
        }
    }
    Ok(history)
}

/// A history holding only what the header line `line` says (`path` names it in errors).
pub(super) fn header(path: &Path, line: &[u8]) -> Result<History, JournalError> {
    match serde_json::from_slice::<Record>(line) {
        Ok(Record::Open {
            format,
            session_id,
            cwd,
            at,
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
                ..History::default()
            })
        }
        Ok(_) => Err(not_a_journal(path, ": it is another record")),
        Err(e) => Err(not_a_journal(path, &format!(": {e}"))),
    }
}

fn not_a_journal(path: &Path, detail: &str) -> JournalError {
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
