//! Reading acplb's provider transcripts (`<dir>/<session>/turn-<n>.jsonl`, and on app-server
//! `<dir>/app-server-<n>.jsonl` per process; written because `playback record` sets
//! `ACPLB_TRANSCRIPT_DIR`).

use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use crate::error::PlaybackError;
use crate::scenario::{End, EventKind};

/// One turn's Codex process as acplb saw it.
#[derive(Debug, Clone)]
pub(crate) struct TranscriptRun {
    /// The session directory's name (the sanitized ACP session id).
    pub(crate) session_dir: String,
    /// The turn number from the file name.
    pub(crate) turn: u64,
    /// Codex's arguments.
    pub(crate) argv: Vec<String>,
    /// Bytes of prompt on stdin.
    pub(crate) stdin_bytes: usize,
    /// `(t_ms, line, is_stdout)` in order.
    pub(crate) lines: Vec<(u64, String, bool)>,
    /// How it ended.
    pub(crate) end: End,
    /// When the file was made (the order runs started in).
    pub(crate) created: SystemTime,
}

/// One app-server process as acplb saw it.
#[derive(Debug, Clone)]
pub(crate) struct ServerTranscript {
    /// Its number (1 for the first acplb started).
    pub(crate) server: u64,
    /// Its arguments.
    pub(crate) argv: Vec<String>,
    /// `(t_ms, Sent | Recv | Stderr)` in order.
    pub(crate) events: Vec<(u64, EventKind)>,
    /// How it ended (`Cancelled`: acplb stopped it, or the transcript says nothing).
    pub(crate) end: End,
}

/// One turn of a session on app-server.
#[derive(Debug, Clone)]
pub(crate) struct AppTurnTranscript {
    /// The session directory's name (the sanitized ACP session id).
    pub(crate) session_dir: String,
    /// The turn number from the file name.
    pub(crate) turn: u64,
    /// The app-server process it ran on.
    pub(crate) server: u64,
    /// `(t_ms, Sent | Recv)` in order (a `cancelled` line is not kept: it is no message).
    pub(crate) events: Vec<(u64, EventKind)>,
    /// When the file was made.
    pub(crate) created: SystemTime,
}

/// Everything acplb wrote into a transcript directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Transcripts {
    /// `codex exec` runs, in the order they started.
    pub(crate) runs: Vec<TranscriptRun>,
    /// App-server processes, by number.
    pub(crate) servers: Vec<ServerTranscript>,
    /// App-server turns, in the order they started.
    pub(crate) turns: Vec<AppTurnTranscript>,
}

/// Every transcript under `dir`: exec runs and app-server turns in the order they started,
/// app-server processes by number.
pub(crate) fn read_all(dir: &Path) -> Result<Transcripts, PlaybackError> {
    let mut all = Transcripts::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(all);
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix("app-server-")
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|n| n.parse().ok())
            && entry.path().is_file()
        {
            all.servers.push(read_server(&entry.path(), n)?);
            continue;
        }
        if !entry.path().is_dir() {
            continue;
        }
        let session = entry;
        let session_dir = name;
        let files = std::fs::read_dir(session.path()).map_err(PlaybackError::io(session.path()))?;
        for file in files.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(turn) = name
                .strip_prefix("turn-")
                .and_then(|n| n.strip_suffix(".jsonl"))
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let path = file.path();
            if is_app_server_turn(&path)? {
                if let Some(t) = read_app_turn(&path, session_dir.clone(), turn)? {
                    all.turns.push(t);
                }
            } else {
                all.runs.push(read(&path, session_dir.clone(), turn)?);
            }
        }
    }
    all.runs
        .sort_by(|a, b| (a.created, &a.session_dir, a.turn).cmp(&(b.created, &b.session_dir, b.turn)));
    all.turns
        .sort_by(|a, b| (a.created, &a.session_dir, a.turn).cmp(&(b.created, &b.session_dir, b.turn)));
    all.servers.sort_by_key(|s| s.server);
    Ok(all)
}

/// Whether a turn file is an app-server turn (its first line says so); an empty file (the
/// turn never reached its server) counts as one.
fn is_app_server_turn(path: &Path) -> Result<bool, PlaybackError> {
    let text = std::fs::read_to_string(path).map_err(PlaybackError::io(path))?;
    let Some(first) = text.lines().find(|l| !l.trim().is_empty()) else {
        return Ok(true);
    };
    let value: Value = serde_json::from_str(first).unwrap_or(Value::Null);
    Ok(value.pointer("/start/transport").and_then(Value::as_str) == Some("app-server"))
}

/// The lines of a JSONL transcript as values, with an error naming the file and line.
fn lines(path: &Path) -> Result<Vec<(usize, Value)>, PlaybackError> {
    let text = std::fs::read_to_string(path).map_err(PlaybackError::io(path))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map(|v| (i + 1, v))
                .map_err(|e| PlaybackError::Invalid {
                    path: path.to_path_buf(),
                    line: i + 1,
                    message: format!("not a transcript line: {e}"),
                })
        })
        .collect()
}

/// `sent`, `recv` or `stderr` of one app-server transcript line, with its time.
fn message(value: &Value) -> Option<(u64, EventKind)> {
    let t = value.get("t_ms").and_then(Value::as_u64).unwrap_or(0);
    if let Some(msg) = value.get("sent") {
        Some((t, EventKind::Sent(msg.to_string())))
    } else if let Some(msg) = value.get("recv") {
        Some((t, EventKind::Recv(msg.to_string())))
    } else {
        let err = value.get("stderr").and_then(Value::as_str)?;
        Some((t, EventKind::Stderr(err.to_owned())))
    }
}

fn read_server(path: &Path, server: u64) -> Result<ServerTranscript, PlaybackError> {
    let mut run = ServerTranscript {
        server,
        argv: Vec::new(),
        events: Vec::new(),
        end: End::Cancelled,
    };
    for (line, value) in lines(path)? {
        if let Some(start) = value.get("start") {
            run.argv = strings(start.get("argv"));
        } else if let Some(event) = message(&value) {
            run.events.push(event);
        } else if let Some(exit) = value.get("exit") {
            run.end = exit_end(exit);
        } else if value.get("stopped").is_some() {
            run.end = End::Cancelled;
        } else {
            return Err(PlaybackError::Invalid {
                path: path.to_path_buf(),
                line,
                message: "unknown app-server transcript line".to_owned(),
            });
        }
    }
    Ok(run)
}

fn read_app_turn(
    path: &Path,
    session_dir: String,
    turn: u64,
) -> Result<Option<AppTurnTranscript>, PlaybackError> {
    let meta = std::fs::metadata(path).map_err(PlaybackError::io(path))?;
    let created = meta
        .created()
        .or_else(|_| meta.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut run = AppTurnTranscript {
        session_dir,
        turn,
        server: 0,
        events: Vec::new(),
        created,
    };
    for (line, value) in lines(path)? {
        if let Some(start) = value.get("start") {
            run.server = start.get("server").and_then(Value::as_u64).unwrap_or(1);
        } else if let Some(event) = message(&value) {
            run.events.push(event);
        } else if value.get("cancelled").is_none() {
            return Err(PlaybackError::Invalid {
                path: path.to_path_buf(),
                line,
                message: "unknown app-server transcript line".to_owned(),
            });
        }
    }
    Ok((run.server > 0).then_some(run))
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn exit_end(exit: &Value) -> End {
    match (exit.get("code"), exit.get("signal")) {
        (Some(code), _) => End::Exit(as_i32(code)),
        (None, Some(signal)) => End::Signal(as_i32(signal)),
        (None, None) => End::Exit(-1),
    }
}

fn read(path: &Path, session_dir: String, turn: u64) -> Result<TranscriptRun, PlaybackError> {
    let text = std::fs::read_to_string(path).map_err(PlaybackError::io(path))?;
    let meta = std::fs::metadata(path).map_err(PlaybackError::io(path))?;
    let created = meta
        .created()
        .or_else(|_| meta.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut run = TranscriptRun {
        session_dir,
        turn,
        argv: Vec::new(),
        stdin_bytes: 0,
        lines: Vec::new(),
        end: End::Cancelled,
        created,
    };
    let mut ended = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let invalid = |message: String| PlaybackError::Invalid {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        let value: Value =
            serde_json::from_str(line).map_err(|e| invalid(format!("not a transcript line: {e}")))?;
        let t = value.get("t_ms").and_then(Value::as_u64).unwrap_or(0);
        if let Some(start) = value.get("start") {
            run.argv = strings(start.get("argv"));
            run.stdin_bytes = start
                .get("stdin_bytes")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0);
        } else if let Some(out) = value.get("stdout").and_then(Value::as_str) {
            run.lines.push((t, out.to_owned(), true));
        } else if let Some(err) = value.get("stderr").and_then(Value::as_str) {
            run.lines.push((t, err.to_owned(), false));
        } else if let Some(exit) = value.get("exit") {
            run.end = exit_end(exit);
            ended = true;
        } else if value.get("cancelled").is_some() {
            run.end = End::Cancelled;
            ended = true;
        } else {
            return Err(invalid("unknown transcript line".to_owned()));
        }
    }
    if !ended {
        tracing::warn!(path = %path.display(), "transcript has no exit status; replayed as cancelled");
    }
    Ok(run)
}

fn as_i32(v: &Value) -> i32 {
    v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(-1)
}
