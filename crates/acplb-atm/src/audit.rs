//! The append-only audit log (`audit.jsonl`): ATM tool calls and prompts forwarded to Codex,
//! one JSON object per line, secrets redacted.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::redact::redact;

/// Free text kept per record (summaries, prompt heads), counted in characters.
pub const SUMMARY_CHARS: usize = 200;

/// Why the audit log could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// Opening or appending failed.
    #[error("{action} `{}` failed: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The log file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// One ATM tool call, as the caller describes it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The acting identity.
    pub identity: &'a str,
    /// Its team.
    pub team: &'a str,
    /// `atm_send`, `atm_read`, `atm_broadcast` or `atm_pending_count`.
    pub tool: &'a str,
    /// The recipient (`agent@team`), for sends.
    pub recipient: Option<&'a str>,
    /// The message summary (redacted and cut to 200 characters here).
    pub summary: Option<&'a str>,
    /// The message ids involved.
    pub message_ids: &'a [String],
    /// `Err(message)` when the call failed.
    pub result: Result<(), &'a str>,
}

#[derive(Serialize)]
struct ToolCallLine<'a> {
    timestamp: String,
    event_type: &'a str,
    identity: &'a str,
    team: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipient: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_summary: Option<String>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    message_ids: &'a [String],
    result: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
struct PromptLine<'a> {
    timestamp: String,
    event_type: &'static str,
    session_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    thread_id: Option<&'a str>,
    prompt_summary: String,
}

/// An open audit log; every record is a single `write` on an `O_APPEND` file, so concurrent
/// writers (other sessions of the team) never interleave within a line.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: File,
}

impl AuditLog {
    /// Opens (creating it and its directory) the log at `path` for appending. A new log is
    /// readable by the user only (it holds prompt text); anything but a regular file (a FIFO,
    /// a device) is refused instead of written to, and never waited on.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, AuditError> {
        let path = path.into();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| AuditError::Io {
                action: "create audit directory",
                path: dir.to_owned(),
                source,
            })?;
        }
        let io = |action, source| AuditError::Io {
            action,
            path: path.clone(),
            source,
        };
        // O_NONBLOCK: opening a FIFO without a reader fails at once instead of blocking the
        // session's thread; it changes nothing for a regular file.
        let file = File::options()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| io("open audit log", e))?;
        let meta = file.metadata().map_err(|e| io("inspect audit log", e))?;
        if !meta.is_file() {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
            return Err(io("open audit log", e));
        }
        Ok(Self { path, file })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records an ATM tool call.
    pub fn tool_call(&self, call: &ToolCall<'_>) -> Result<(), AuditError> {
        self.append(&ToolCallLine {
            timestamp: crate::time::format_millis(crate::time::now_millis()),
            event_type: call.tool,
            identity: call.identity,
            team: call.team,
            recipient: call.recipient,
            message_summary: call.summary.map(summarize),
            message_ids: call.message_ids,
            result: if call.result.is_ok() { "ok" } else { "error" },
            error: call.result.err().map(summarize),
        })
    }

    /// Records a prompt forwarded to Codex: the ACP session, the Codex thread, and the first 200
    /// characters (after redaction).
    pub fn prompt(&self, session_id: &str, thread_id: Option<&str>, prompt: &str) -> Result<(), AuditError> {
        self.append(&PromptLine {
            timestamp: crate::time::format_millis(crate::time::now_millis()),
            event_type: "prompt",
            session_id,
            thread_id,
            prompt_summary: summarize(prompt),
        })
    }

    fn append(&self, line: &impl Serialize) -> Result<(), AuditError> {
        let io = |action, source| AuditError::Io {
            action,
            path: self.path.clone(),
            source,
        };
        let mut buf = serde_json::to_vec(line).map_err(|e| io("serialize audit record", e.into()))?;
        buf.push(b'\n');
        let written = (&self.file)
            .write(&buf)
            .map_err(|e| io("append to audit log", e))?;
        if written < buf.len() {
            // Regular files take the whole buffer at once; finish a short write anyway.
            tracing::warn!(path = %self.path.display(), written, len = buf.len(), "short audit write");
            (&self.file)
                .write_all(&buf[written..])
                .map_err(|e| io("append to audit log", e))?;
        }
        Ok(())
    }
}

/// Redacts first (so a secret cut at the boundary cannot survive as a fragment), then cuts.
fn summarize(text: &str) -> String {
    redact(text).chars().take(SUMMARY_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn writes_one_redacted_line_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(dir.path().join("a/audit.jsonl")).unwrap();
        let ids = vec!["01ABC".to_owned()];
        log.tool_call(&ToolCall {
            identity: "codex",
            team: "demo",
            tool: "atm_send",
            recipient: Some("bob@demo"),
            summary: Some("here is my key sk-abcdefghijklmnopqrstuvwxyz"),
            message_ids: &ids,
            result: Ok(()),
        })
        .unwrap();
        let prompt = format!("Authorization: Bearer abcdefghijkl\n{}", "x".repeat(300));
        log.prompt("sess-1", Some("thread-9"), &prompt).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event_type"], "atm_send");
        assert_eq!(lines[0]["recipient"], "bob@demo");
        assert_eq!(lines[0]["message_summary"], "here is my key [REDACTED]");
        assert_eq!(lines[0]["message_ids"][0], "01ABC");
        assert_eq!(lines[0]["result"], "ok");
        assert!(lines[0]["timestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(lines[1]["session_id"], "sess-1");
        assert_eq!(lines[1]["thread_id"], "thread-9");
        let head = lines[1]["prompt_summary"].as_str().unwrap();
        assert!(head.starts_with("Authorization: [REDACTED]\nxxx"));
        assert_eq!(head.chars().count(), 200);
        assert!(!text.contains("abcdefghijkl"));
    }

    #[test]
    fn a_new_log_is_private_and_only_regular_files_are_written() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(dir.path().join("audit.jsonl")).unwrap();
        let mode = std::fs::metadata(log.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // No reader: refused at once rather than waiting for one.
        assert!(AuditLog::open(&fifo).is_err());
        let err = AuditLog::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("open audit log"), "{err}");
    }
}
