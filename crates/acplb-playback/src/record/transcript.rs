//! Reading acplb's provider transcripts (`<dir>/<session>/turn-<n>.jsonl`, written because
//! `playback record` sets `ACPLB_TRANSCRIPT_DIR`).

use std::path::Path;
use std::time::SystemTime;

use serde_json::Value;

use crate::error::PlaybackError;
use crate::scenario::End;

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

/// Every transcript under `dir`, in the order the runs started.
pub(crate) fn read_all(dir: &Path) -> Result<Vec<TranscriptRun>, PlaybackError> {
    let mut runs = Vec::new();
    let Ok(sessions) = std::fs::read_dir(dir) else {
        return Ok(runs);
    };
    for session in sessions.flatten() {
        let session_dir = session.file_name().to_string_lossy().into_owned();
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
            runs.push(read(&file.path(), session_dir.clone(), turn)?);
        }
    }
    runs.sort_by(|a, b| (a.created, &a.session_dir, a.turn).cmp(&(b.created, &b.session_dir, b.turn)));
    Ok(runs)
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
            run.argv = start
                .get("argv")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
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
            run.end = match (exit.get("code"), exit.get("signal")) {
                (Some(code), _) => End::Exit(as_i32(code)),
                (None, Some(signal)) => End::Signal(as_i32(signal)),
                (None, None) => End::Exit(-1),
            };
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
