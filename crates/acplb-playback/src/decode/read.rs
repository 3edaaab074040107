//! The reading side of `decode`: splits the input into lines, detects its format from the first
//! one, unwraps transcript lines, and hands records over in batches.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;

use serde::Deserialize;

use super::Format;

/// One input line, ready for the decoder.
#[derive(Debug)]
pub(super) enum Record {
    /// The input's format (the first record).
    Format(Format),
    /// A transcript's `start` line.
    Start { cwd: Option<PathBuf> },
    /// A Codex stdout line.
    Stdout(String),
    /// A Codex stderr line.
    Stderr(String),
    /// A transcript's `exit` line.
    Exit(serde_json::Value),
    /// A transcript's `cancelled` line.
    Cancelled,
    /// A line that could not be used.
    Problem { message: String, error: bool },
}

/// `(line number, record)` pairs.
pub(super) type Batch = Vec<(usize, Record)>;

/// Records per batch, and bytes of text per batch: enough to amortize the channel.
const BATCH_RECORDS: usize = 512;
const BATCH_BYTES: usize = 1 << 20;

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    stdout: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stderr: Option<Cow<'a, str>>,
    #[serde(default)]
    start: Option<Start>,
    #[serde(default)]
    exit: Option<serde_json::Value>,
    #[serde(default)]
    cancelled: Option<bool>,
}

#[derive(Deserialize)]
struct Start {
    #[serde(default)]
    cwd: Option<PathBuf>,
}

/// Reads `input` to its end (or until the receiver is gone), sending batches to `tx`.
pub(super) fn records<R: BufRead>(mut input: R, tx: &SyncSender<std::io::Result<Batch>>) {
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut batch: Batch = Vec::with_capacity(BATCH_RECORDS);
    let mut batch_bytes = 0;
    let mut format = None;
    let mut line_no = 0;
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                // The receiver reports it; if it is gone there is nobody to tell.
                let _gone = tx.send(Err(e));
                return;
            }
        }
        line_no += 1;
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(&buf),
        };
        let line = text.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let format = *format.get_or_insert_with(|| {
            let f = detect(line);
            batch.push((line_no, Record::Format(f)));
            f
        });
        batch_bytes += line.len();
        batch.push((line_no, parse(format, line)));
        if batch.len() >= BATCH_RECORDS || batch_bytes >= BATCH_BYTES {
            batch_bytes = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS));
            if tx.send(Ok(full)).is_err() {
                return;
            }
        }
    }
    if !batch.is_empty() {
        let _gone = tx.send(Ok(batch));
    }
}

/// A `{"t_ms":N,"stdout":"…"}` line exactly as acplb writes it, unwrapped without a general
/// JSON parse (most of a transcript's bytes); `None` sends the line down the general path.
fn fast_stdout(line: &str) -> Option<String> {
    let rest = line.strip_prefix("{\"t_ms\":")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let body = rest[digits..]
        .strip_prefix(",\"stdout\":\"")?
        .strip_suffix("\"}")?;
    unescape(body.as_bytes())
}

/// The value of a JSON string body; `None` for anything unusual (a bare quote, a bad escape).
fn unescape(bytes: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..]
            .iter()
            .position(|b| *b == b'\\' || *b == b'"')
            .unwrap_or(bytes.len() - i);
        out.extend_from_slice(&bytes[i..i + run]);
        i += run;
        if i == bytes.len() {
            break;
        }
        if bytes[i] == b'"' {
            return None;
        }
        let byte = match *bytes.get(i + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            // \u escapes (rare in acplb's output) take the general path.
            _ => return None,
        };
        out.push(byte);
        i += 2;
    }
    String::from_utf8(out).ok()
}

/// A transcript's lines are objects with `start` or `t_ms`; anything else is raw Codex output.
fn detect(first: &str) -> Format {
    if first.starts_with("{\"start\"") || first.starts_with("{\"t_ms\"") {
        return Format::Transcript;
    }
    match serde_json::from_str::<serde_json::Value>(first) {
        Ok(v) if v.get("start").is_some() || v.get("t_ms").is_some() => Format::Transcript,
        _ => Format::Raw,
    }
}

fn parse(format: Format, line: &str) -> Record {
    if format == Format::Raw {
        return Record::Stdout(line.to_owned());
    }
    if let Some(stdout) = fast_stdout(line) {
        return Record::Stdout(stdout);
    }
    let envelope: Envelope<'_> = match serde_json::from_str(line) {
        Ok(e) => e,
        Err(e) => {
            return Record::Problem {
                message: format!("not a transcript line (truncated?): {e}"),
                error: true,
            };
        }
    };
    if let Some(start) = envelope.start {
        Record::Start { cwd: start.cwd }
    } else if let Some(out) = envelope.stdout {
        Record::Stdout(out.into_owned())
    } else if let Some(err) = envelope.stderr {
        Record::Stderr(err.into_owned())
    } else if let Some(exit) = envelope.exit {
        Record::Exit(exit)
    } else if envelope.cancelled == Some(true) {
        Record::Cancelled
    } else {
        Record::Problem {
            message: "unknown transcript line".to_owned(),
            error: true,
        }
    }
}
