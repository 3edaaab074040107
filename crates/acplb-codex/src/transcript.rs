//! The provider transcript: when enabled, every turn's Codex stream (argv, stdin size, each
//! stdout and stderr line with its time, the exit status) is written to a JSONL file, so
//! `playback record` and bug reports can capture exactly what Codex printed.
//!
//! Layout: `<dir>/<session id>/turn-<n>.jsonl`, one object per line:
//! `{"start":{"argv":[..],"cwd":..,"stdin_bytes":N}}`, then `{"t_ms":T,"stdout":LINE}` or
//! `{"t_ms":T,"stderr":LINE}`, then `{"t_ms":T,"exit":{"code":C}}` (or `"signal"`), or
//! `{"t_ms":T,"cancelled":true}` when the turn was cancelled.
//!
//! An app-server turn starts with
//! `{"start":{"transport":"app-server","thread":..,"cwd":..,"stdin_bytes":N,"server":G}}` (`G`:
//! which app-server process, 1 for the first acplb started) and holds the JSON-RPC messages of
//! its thread both ways: `{"t_ms":T,"sent":MSG}` (acplb's requests `{"method","params"}`, its
//! answers to Codex's requests `{"id","result"}` or `{"id","error":{"code","message"}}`) and
//! `{"t_ms":T,"recv":MSG}` (notifications `{"method","params"}`, Codex's requests
//! `{"id","method","params"}`, results of acplb's requests `{"method","result"}`, or
//! `{"method","error":{"code","message"}}`, or `{"method","gone":{"status"}}` when the server
//! died first; `{"gone":{"status"}}` when it died while the turn waited for news). A cancelled
//! turn ends with `{"t_ms":T,"cancelled":true}`.
//!
//! Each app-server process has its own file, `<dir>/app-server-<G>.jsonl`:
//! `{"start":{"transport":"app-server","argv":[..],"server":G}}`, the `initialize` exchange as
//! `sent`/`recv` lines, its stderr lines, then `{"t_ms":T,"exit":{..}}` when it ended by itself
//! or `{"t_ms":T,"stopped":{..}}` when acplb stopped it.
//!
//! Transcripts hold conversation text: files are created `0600` (folders `0700`), and every
//! line is redacted first, both for the session's known secrets (its MCP servers' `env` and
//! header values) and for the secret shapes of `acplb_core::redact`.

use std::ffi::OsString;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Instant;

use acplb_core::secrets::KnownSecrets;
use serde_json::json;

/// The transcript of one turn; every write failure is logged once and then ignored, because a
/// transcript must never break a turn.
#[derive(Debug)]
pub(crate) struct Transcript {
    file: Option<std::io::BufWriter<File>>,
    started: Instant,
    path: PathBuf,
    secrets: KnownSecrets,
}

impl Transcript {
    /// Opens the transcript of turn `turn` of `session`, or a no-op one when `dir` is `None`.
    pub(crate) fn open(dir: Option<&Path>, session: &str, turn: u64, secrets: KnownSecrets) -> Self {
        Self::open_as(dir, session, turn, secrets, false)
    }

    /// Opens the transcript of turn `turn` of `session` again, for the turn's second attempt
    /// (a server found gone at its start): what the first attempt wrote stays, this one's
    /// lines follow it.
    pub(crate) fn open_again(dir: Option<&Path>, session: &str, turn: u64, secrets: KnownSecrets) -> Self {
        Self::open_as(dir, session, turn, secrets, true)
    }

    fn open_as(dir: Option<&Path>, session: &str, turn: u64, secrets: KnownSecrets, again: bool) -> Self {
        let started = Instant::now();
        let Some(dir) = dir else {
            return Self {
                file: None,
                started,
                path: PathBuf::new(),
                secrets,
            };
        };
        let path = dir
            .join(session_dir_name(session))
            .join(format!("turn-{turn}.jsonl"));
        let file = create_private(&path, again)
            .map_err(|e| tracing::warn!(path = %path.display(), error = %e, "cannot write the provider transcript"))
            .ok()
            .map(std::io::BufWriter::new);
        Self {
            file,
            started,
            path,
            secrets,
        }
    }

    pub(crate) fn start(&mut self, argv: &[OsString], cwd: &Path, stdin_bytes: usize) {
        if self.file.is_none() {
            return;
        }
        let argv: Vec<String> = argv
            .iter()
            .map(|a| self.secrets.redact(&a.to_string_lossy()))
            .collect();
        self.write(&json!({ "start": { "argv": argv, "cwd": cwd, "stdin_bytes": stdin_bytes } }));
    }

    pub(crate) fn stdout(&mut self, line: &str) {
        if self.file.is_some() {
            let line = self.secrets.redact_json_line(line);
            self.timed("stdout", &json!(line));
        }
    }

    /// An app-server turn begins: which thread, in which folder, on which server process.
    pub(crate) fn start_app_server(
        &mut self,
        thread: Option<&str>,
        cwd: &Path,
        prompt_bytes: usize,
        server: u64,
    ) {
        if self.file.is_some() {
            self.write(&json!({ "start": { "transport": "app-server", "thread": thread, "cwd": cwd, "stdin_bytes": prompt_bytes, "server": server } }));
        }
    }

    /// Opens the transcript of app-server process `server` (`<dir>/app-server-<server>.jsonl`),
    /// or a no-op one when `dir` is `None`, and writes its start line.
    pub(crate) fn open_process(dir: Option<&Path>, server: u64, argv: &[OsString]) -> Self {
        let mut transcript = Self::open(None, "", 0, KnownSecrets::default());
        if let Some(dir) = dir {
            transcript.path = dir.join(format!("app-server-{server}.jsonl"));
            transcript.file = create_private(&transcript.path, false)
                .map_err(|e| tracing::warn!(path = %transcript.path.display(), error = %e, "cannot write the provider transcript"))
                .ok()
                .map(std::io::BufWriter::new);
        }
        if transcript.file.is_some() {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
            let argv: Vec<String> = argv.iter().map(|a| transcript.secrets.redact(a)).collect();
            transcript
                .write(&json!({ "start": { "transport": "app-server", "argv": argv, "server": server } }));
        }
        transcript
    }

    /// The process was stopped by acplb (shutdown, or an unanswered `initialize`).
    pub(crate) fn stopped(&mut self, status: Option<ExitStatus>) {
        self.timed("stopped", &status.map_or(json!({}), exit_json));
        self.flush();
    }

    /// One JSON-RPC message of the session's thread: `sent` by acplb, or received.
    pub(crate) fn message(&mut self, sent: bool, msg: &serde_json::Value) {
        if self.file.is_some() {
            let line = self.secrets.redact_json_line(&msg.to_string());
            let value = serde_json::from_str(&line).unwrap_or(serde_json::Value::String(line));
            self.timed(if sent { "sent" } else { "recv" }, &value);
        }
    }

    /// One JSON-RPC message, as [`Transcript::message`], built by `msg` only when a transcript
    /// is being written.
    pub(crate) fn record(&mut self, sent: bool, msg: impl FnOnce() -> serde_json::Value) {
        if self.file.is_some() {
            self.message(sent, &msg());
        }
    }

    /// The app-server turn ended (completed, failed, or the server went away); also makes the
    /// lines so far of a process transcript reach the file.
    pub(crate) fn end(&mut self) {
        self.flush();
    }

    pub(crate) fn stderr(&mut self, line: &str) {
        if self.file.is_some() {
            let line = self.secrets.redact(line);
            self.timed("stderr", &json!(line));
        }
    }

    pub(crate) fn exit(&mut self, status: ExitStatus) {
        self.timed("exit", &exit_json(status));
        self.flush();
    }

    pub(crate) fn cancelled(&mut self) {
        self.timed("cancelled", &json!(true));
        self.flush();
    }

    fn timed(&mut self, key: &str, value: &serde_json::Value) {
        if self.file.is_some() {
            let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.write(&json!({ "t_ms": ms, key: value }));
        }
    }

    fn write(&mut self, value: &serde_json::Value) {
        let Some(file) = self.file.as_mut() else { return };
        if let Err(e) = serde_json::to_writer(&mut *file, value)
            .map_err(std::io::Error::from)
            .and_then(|()| file.write_all(b"\n"))
        {
            tracing::warn!(path = %self.path.display(), error = %e, "provider transcript write failed; disabled for this turn");
            self.file = None;
        }
    }

    fn flush(&mut self) {
        if let Some(f) = self.file.as_mut()
            && let Err(e) = f.flush()
        {
            tracing::warn!(path = %self.path.display(), error = %e, "provider transcript flush failed");
        }
    }
}

/// `{"code":C}` or `{"signal":S}`.
fn exit_json(status: ExitStatus) -> serde_json::Value {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => json!({ "code": code }),
        (None, Some(signal)) => json!({ "signal": signal }),
        (None, None) => json!({}),
    }
}

/// Creates `path` readable by its owner only, and its missing folders likewise; with
/// `append`, what it holds is kept and writes go after it.
fn create_private(path: &Path, append: bool) -> std::io::Result<File> {
    if let Some(parent) = path.parent() {
        DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    OpenOptions::new()
        .write(!append)
        .append(append)
        .create(true)
        .truncate(!append)
        .mode(0o600)
        .open(path)
}

/// The folder name of a session's transcripts under the transcript dir: the session id with
/// every character but ASCII letters, digits, `-` and `_` replaced by `_`.
pub fn session_dir_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;

    use super::*;

    #[test]
    fn writes_start_lines_and_exit() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Transcript::open(Some(dir.path()), "s/1", 2, KnownSecrets::default());
        t.start(&["exec".into(), "--json".into()], Path::new("/w"), 5);
        t.stdout("{\"type\":\"turn.started\"}");
        t.stderr("warn");
        t.exit(ExitStatus::from_raw(0));
        let text = std::fs::read_to_string(dir.path().join("s_1/turn-2.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["start"]["argv"][1], "--json");
        assert_eq!(lines[0]["start"]["stdin_bytes"], 5);
        assert_eq!(lines[1]["stdout"], "{\"type\":\"turn.started\"}");
        assert_eq!(lines[2]["stderr"], "warn");
        assert_eq!(lines[3]["exit"]["code"], 0);
    }

    #[test]
    fn a_turns_second_attempt_follows_its_first_and_a_new_turn_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s/turn-3.jsonl");
        let lines = || std::fs::read_to_string(&path).unwrap().lines().count();
        let mut first = Transcript::open(Some(dir.path()), "s", 3, KnownSecrets::default());
        first.start_app_server(None, Path::new("/w"), 5, 1);
        first.end();
        drop(first);
        let mut again = Transcript::open_again(Some(dir.path()), "s", 3, KnownSecrets::default());
        again.start_app_server(Some("th"), Path::new("/w"), 5, 2);
        again.end();
        drop(again);
        let text = std::fs::read_to_string(&path).unwrap();
        let starts: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| !l["start"].is_null())
            .collect();
        assert_eq!(starts.len(), 2, "{text}");
        assert_eq!(starts[1]["start"]["server"], 2);
        let mut fresh = Transcript::open(Some(dir.path()), "s", 3, KnownSecrets::default());
        fresh.start_app_server(None, Path::new("/w"), 5, 3);
        drop(fresh);
        assert_eq!(lines(), 1, "a new turn of the same number starts afresh");
    }

    #[test]
    fn transcripts_are_private_and_redacted() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let secret = "my-mcp-secret-0042";
        let mut t = Transcript::open(Some(dir.path()), "s", 1, KnownSecrets::new([secret]));
        t.start(
            &["exec".into(), format!("-c x={secret}").into()],
            Path::new("/w"),
            5,
        );
        let event = json!({ "type": "item.completed", "item": { "text": format!("got {secret}") } });
        t.stdout(&event.to_string());
        t.stderr(&format!(
            "server said {secret}; OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv"
        ));
        t.exit(ExitStatus::from_raw(0));
        let path = dir.path().join("s/turn-1.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(secret) && !text.contains("sk-abc"), "{text}");
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let stdout: serde_json::Value = serde_json::from_str(lines[1]["stdout"].as_str().unwrap()).unwrap();
        assert_eq!(stdout["item"]["text"], "got [REDACTED]");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("s")), 0o700);
    }

    #[test]
    fn disabled_transcript_writes_nothing() {
        let mut t = Transcript::open(None, "s", 1, KnownSecrets::default());
        t.stdout("x");
        assert!(t.file.is_none());
    }
}
