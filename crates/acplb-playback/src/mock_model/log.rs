//! The request log: every request the mock received, kept in memory and optionally appended to a JSONL file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use serde_json::{Map, Value};

use super::MockError;

/// The request headers kept in the log (lowercase names).
pub const LOGGED_HEADERS: [&str; 6] = [
    "authorization",
    "originator",
    "session-id",
    "thread-id",
    "user-agent",
    "content-encoding",
];

/// One request as the mock saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LoggedRequest {
    /// The HTTP method.
    pub method: String,
    /// The request path (`/v1/responses`).
    pub path: String,
    /// The headers of [`LOGGED_HEADERS`] that were present.
    pub headers: Map<String, Value>,
    /// The JSON body; `null` when there was none or it did not parse.
    pub body: Value,
    /// The scenario played (`default` when the prompt had no token); `None` if no scenario was consulted.
    pub scenario: Option<String>,
    /// The step played.
    pub step: usize,
    /// Whether this was an `--approve-for-me` reviewer request (answered with the scenario's verdict).
    pub review: bool,
    /// The HTTP status answered.
    pub status: u16,
    /// When the request's head arrived (not logged: an instant means nothing outside this process).
    #[serde(skip)]
    pub received: std::time::Instant,
}

impl LoggedRequest {
    /// A header value, if it was logged.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(Value::as_str)
    }

    /// The `input` items of the body (empty if absent).
    pub fn input(&self) -> &[Value] {
        self.body
            .get("input")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// The texts of the user messages in `input`, in order.
    pub fn user_texts(&self) -> Vec<String> {
        self.input()
            .iter()
            .filter(|item| item.get("role").and_then(Value::as_str) == Some("user"))
            .filter_map(|item| item.get("content").and_then(Value::as_array))
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    }
}

#[derive(Debug, Default)]
struct Inner {
    entries: Vec<LoggedRequest>,
    file: Option<File>,
}

/// A cheap-to-clone handle on the shared log.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestLog {
    inner: Arc<Mutex<Inner>>,
}

impl RequestLog {
    /// A log that also appends JSON lines to `path` (created if missing, readable by its owner
    /// only: the requests hold the conversation).
    pub(crate) fn with_file(path: &Path) -> Result<RequestLog, MockError> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = OpenOptions::new()
            .create(true)
            .mode(0o600)
            .append(true)
            .open(path)
            .map_err(|source| MockError::LogFile {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(RequestLog {
            inner: Arc::new(Mutex::new(Inner {
                entries: Vec::new(),
                file: Some(file),
            })),
        })
    }

    /// Records a request; a failing file write is reported once through tracing and not retried.
    pub(crate) fn record(&self, request: LoggedRequest) {
        let mut inner = self.lock();
        if let Some(file) = inner.file.as_mut() {
            let written = serde_json::to_string(&request)
                .map_err(std::io::Error::from)
                .and_then(|line| writeln!(file, "{line}"));
            if let Err(error) = written {
                tracing::warn!(%error, "cannot append to the mock request log; keeping it in memory only");
                inner.file = None;
            }
        }
        inner.entries.push(request);
    }

    /// A copy of every request so far.
    pub(crate) fn snapshot(&self) -> Vec<LoggedRequest> {
        self.lock().entries.clone()
    }

    /// A panic elsewhere while holding the lock leaves the entries intact, so a poisoned lock is used as is.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(path: &str) -> LoggedRequest {
        let mut headers = Map::new();
        headers.insert("originator".into(), json!("codex_exec"));
        LoggedRequest {
            method: "POST".into(),
            path: path.into(),
            headers,
            body: json!({"input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "no"}]}]}),
            scenario: Some("plain".into()),
            step: 0,
            review: false,
            status: 200,
            received: std::time::Instant::now(),
        }
    }

    #[test]
    fn records_in_memory_and_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let log = RequestLog::with_file(&path).unwrap();
        log.record(entry("/v1/responses"));
        log.record(entry("/v1/other"));
        let entries = log.snapshot();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].header("originator"), Some("codex_exec"));
        assert_eq!(entries[0].user_texts(), ["a\nb"]);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["path"], "/v1/other");
        assert_eq!(lines[0]["scenario"], "plain");
    }
}
