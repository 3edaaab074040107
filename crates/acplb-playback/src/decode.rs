//! `playback decode`: the ACP `session/update` notifications (and turn signals) that a Codex
//! stream produces, with no client and no Codex. Reads a raw `codex exec --json` stdout capture
//! or an acplb provider transcript (`{"t_ms":…,"stdout":…}` lines), or an app-server stream
//! (`app.rs`: an acplb app-server transcript, `{"dir","msg"}` lines, or the server's raw
//! output); the first line tells which.

mod app;
mod read;
mod write;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::error::PlaybackError;
use acplb_codex::exec::decode::{DecodeError, Decoder, DecoderOptions, NoFileTexts, Signal};
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use read::Record;
use write::Out;

/// How to decode.
#[derive(Debug, Clone, Default)]
pub struct DecodeOptions {
    /// The session's workspace (titles show paths relative to it); default: the transcript's
    /// recorded `cwd`, else the current directory.
    pub cwd: Option<PathBuf>,
    /// Whether warnings become `notice` updates (as for a client that shows notices).
    pub notices: bool,
}

/// What the input looked like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `codex exec --json` stdout.
    Raw,
    /// An acplb provider transcript.
    Transcript,
    /// An app-server stream (transcript, `{"dir","msg"}` capture, or raw server output).
    AppServer,
}

/// The outcome of a decode, besides the output.
#[derive(Debug, Clone, Default)]
pub struct DecodeReport {
    /// The input's format (`None` for empty input).
    pub format: Option<Format>,
    /// Lines read.
    pub lines: usize,
    /// Problems, each `FILE:LINE: message`.
    pub warnings: Vec<String>,
    /// Whether any problem was an error (a line that is not JSON, a truncated transcript).
    pub failed: bool,
}

struct State<'p> {
    path: &'p Path,
    decoder: Option<Decoder>,
    opts: DecodeOptions,
    updates: Vec<SessionUpdate>,
    /// Output not yet handed to the writer.
    out: Vec<Out>,
    unknown_seen: std::collections::BTreeMap<String, u64>,
    turn_ended: bool,
    cancelled: bool,
    ended_cleanly: bool,
    report: DecodeReport,
}

/// Decodes `input` (named `path` in messages) into `out`, one JSON object per line.
///
/// Three threads share the work: one reads and splits the input (and unwraps transcript lines),
/// this one decodes, one serializes and writes; each hands the next batches of work.
pub fn decode<R: BufRead + Send, W: Write + Send>(
    path: &Path,
    mut input: R,
    out: &mut W,
    opts: DecodeOptions,
) -> Result<DecodeReport, PlaybackError> {
    if app::detect(input.fill_buf().map_err(PlaybackError::io(path))?) {
        return app::decode(path, input, out, opts);
    }
    let mut st = State {
        path,
        decoder: None,
        opts,
        updates: Vec::new(),
        out: Vec::new(),
        unknown_seen: std::collections::BTreeMap::new(),
        turn_ended: false,
        cancelled: false,
        ended_cleanly: false,
        report: DecodeReport::default(),
    };
    let (records_tx, records) = std::sync::mpsc::sync_channel(4);
    let (out_tx, out_rx) = std::sync::mpsc::sync_channel(4);
    std::thread::scope(|scope| {
        scope.spawn(move || read::records(input, &records_tx));
        let writer = scope.spawn(move || write::lines(&out_rx, out));
        let decoded = (|| {
            for batch in records {
                for (line_no, record) in batch.map_err(PlaybackError::io(path))? {
                    st.report.lines = line_no;
                    st.record(record);
                }
                // A closed channel means the writer failed; its error is reported below.
                if out_tx.send(std::mem::take(&mut st.out)).is_err() {
                    break;
                }
            }
            st.finish();
            let _closed = out_tx.send(std::mem::take(&mut st.out));
            Ok::<(), PlaybackError>(())
        })();
        drop(out_tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writer thread panicked")));
        decoded?;
        written.map_err(PlaybackError::io(path))
    })?;
    Ok(st.report)
}

impl State<'_> {
    fn warn(&mut self, message: impl std::fmt::Display, error: bool) {
        self.report.warnings.push(format!(
            "{}:{}: {message}",
            self.path.display(),
            self.report.lines
        ));
        self.report.failed |= error;
    }

    fn decoder(&mut self) -> &mut Decoder {
        let opts = &self.opts;
        self.decoder.get_or_insert_with(|| {
            let cwd = opts
                .cwd
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_default();
            let mut options = DecoderOptions::new(cwd);
            options.notices = opts.notices;
            Decoder::new(options)
        })
    }

    fn record(&mut self, record: Record) {
        match record {
            Record::Format(format) => self.report.format = Some(format),
            Record::Start { cwd } => {
                if self.opts.cwd.is_none() {
                    self.opts.cwd = cwd;
                }
            }
            Record::Stdout(line) => self.stdout(&line),
            Record::Stderr(line) => {
                let mut updates = std::mem::take(&mut self.updates);
                self.decoder().stderr_line(&line, &mut updates);
                self.updates = updates;
                self.flush();
            }
            Record::Exit(exit) => {
                self.out
                    .push(Out::Line(serde_json::json!({ "exit": exit }).to_string()));
                self.ended_cleanly = true;
            }
            Record::Cancelled => {
                self.out.push(Out::Line(r#"{"cancelled":true}"#.to_owned()));
                self.cancelled = true;
                self.ended_cleanly = true;
            }
            Record::Problem { message, error } => self.warn(message, error),
        }
    }

    fn stdout(&mut self, line: &str) {
        let mut updates = std::mem::take(&mut self.updates);
        let result = self.decoder().line(line, &mut NoFileTexts, &mut updates);
        self.updates = updates;
        match result {
            Ok(Some(signal)) => {
                self.flush();
                if matches!(signal, Signal::TurnCompleted(_) | Signal::TurnFailed { .. }) {
                    self.turn_ended = true;
                }
                self.out.push(Out::Signal(signal));
            }
            Ok(None) => self.flush(),
            Err(DecodeError::Json { message, .. }) => {
                self.warn(
                    format_args!("not a Codex event (truncated, or not JSON): {message}"),
                    true,
                );
            }
            Err(e) => self.warn(e, true),
        }
        self.check_unknown();
    }

    /// Reports the first line of each unknown event or item type (the decoder counts them).
    fn check_unknown(&mut self) {
        let Some(decoder) = &self.decoder else { return };
        let counts = decoder.unknown_counts();
        if counts.len() == self.unknown_seen.len() {
            return;
        }
        let new: Vec<String> = counts
            .keys()
            .filter(|k| !self.unknown_seen.contains_key(*k))
            .cloned()
            .collect();
        self.unknown_seen = counts.clone();
        for key in new {
            let (what, name) = key.split_once(':').unwrap_or(("event", &key));
            let message = format!("unknown Codex {what} type `{name}` (ignored, as acplb does)");
            self.warn(message, false);
        }
    }

    fn flush(&mut self) {
        self.out.extend(self.updates.drain(..).map(Out::Update));
    }

    fn finish(&mut self) {
        let Some(decoder) = &self.decoder else { return };
        let repeated: Vec<String> = decoder
            .unknown_counts()
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(k, n)| format!("`{k}` {n} times"))
            .collect();
        if !repeated.is_empty() {
            let message = format!("unknown types seen in all: {}", repeated.join(", "));
            self.warn(message, false);
        }
        let mut updates = std::mem::take(&mut self.updates);
        self.decoder()
            .close_open_tool_calls(ToolCallStatus::Failed, &mut updates);
        self.updates = updates;
        self.flush();
        if self.report.format == Some(Format::Transcript) && !self.ended_cleanly {
            self.warn("the transcript ends without an exit status (truncated?)", true);
        } else if !self.turn_ended && !self.cancelled {
            self.warn(
                "the stream ends without turn.completed or turn.failed (Codex exited mid-stream?)",
                false,
            );
        }
    }
}

#[cfg(test)]
mod tests;
