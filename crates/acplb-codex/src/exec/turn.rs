//! One turn's Codex stream: each stdout line through the decoder (with file texts from the
//! turn's snapshot once a `file_change` shows up), stderr through the refusal detector, both
//! into the transcript, and the updates out to the sink as they come.

use std::process::ExitStatus;

use acplb_core::provider::SessionSink;
use acplb_core::secrets::KnownSecrets;
use acplb_core::transport::ProcessEvent;
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use tokio::task::JoinHandle;

use super::decode::{Decoder, DecoderOptions, FileTexts, NoFileTexts, Signal, Totals};
use super::files::{NoSnapshot, Snapshot, TurnFiles};
use crate::items::{ChangeKind, Event, ItemKind};
use crate::transcript::Transcript;

/// What the stream said about the turn's end.
pub(crate) enum End {
    Completed(Totals),
    Failed { message: String, auth_required: bool },
}

type SnapshotTask = JoinHandle<Result<Snapshot, NoSnapshot>>;

pub(crate) struct TurnStream {
    decoder: Decoder,
    snapshot: Option<SnapshotTask>,
    /// Made on the first `file_change`, from the snapshot (waiting for it if need be).
    files: Option<TurnFiles>,
    transcript: Transcript,
    /// For the log of Codex's stderr.
    secrets: KnownSecrets,
    out: Vec<SessionUpdate>,
    end: Option<End>,
    thread: Option<String>,
    /// The sink has been told the thread id.
    thread_told: bool,
    line_no: u64,
}

impl TurnStream {
    pub(crate) fn new(
        options: DecoderOptions,
        snapshot: Option<SnapshotTask>,
        transcript: Transcript,
        secrets: KnownSecrets,
    ) -> Self {
        Self {
            decoder: Decoder::new(options),
            snapshot,
            files: None,
            transcript,
            secrets,
            out: Vec::new(),
            end: None,
            thread: None,
            thread_told: false,
            line_no: 0,
        }
    }

    /// Handles one event; returns the exit status once Codex has exited.
    pub(crate) async fn on_event(
        &mut self,
        event: ProcessEvent,
        sink: &dyn SessionSink,
    ) -> Option<ExitStatus> {
        match event {
            ProcessEvent::Stdout(line) => self.on_stdout(&line).await,
            ProcessEvent::StdoutOversized { bytes } => {
                self.line_no += 1;
                tracing::warn!(line = self.line_no, bytes, "dropped an over-long line from codex");
            }
            ProcessEvent::Stderr(line) => {
                self.transcript.stderr(&line);
                if tracing::enabled!(target: "acplb::codex::stderr", tracing::Level::DEBUG) {
                    let line = self.secrets.redact(&line);
                    tracing::debug!(target: "acplb::codex::stderr", "{line}");
                }
                self.decoder.stderr_line(&line, &mut self.out);
            }
            ProcessEvent::Exited(status) => {
                self.transcript.exit(status);
                return Some(status);
            }
        }
        if !self.thread_told
            && let Some(id) = &self.thread
        {
            sink.thread_started(id);
            self.thread_told = true;
        }
        self.flush(sink);
        None
    }

    async fn on_stdout(&mut self, line: &str) {
        self.line_no += 1;
        self.transcript.stdout(line);
        if self.files.is_none() && line.contains("\"file_change\"") {
            let snapshot = match self.snapshot.take() {
                Some(task) => task
                    .await
                    .unwrap_or_else(|e| Err(format!("snapshot task failed: {e}"))),
                None => Err("the turn ran in read-only mode".into()),
            };
            self.files = Some(TurnFiles::new(snapshot));
        }
        if let Some(files) = self.files.as_mut()
            && line.contains("\"file_change\"")
        {
            files.prefetch(changed_paths(line)).await;
        }
        let texts: &mut dyn FileTexts = match self.files.as_mut() {
            Some(f) => f,
            None => &mut NoFileTexts,
        };
        // Codex's error words reach the client as they are (a warning, the failure's message):
        // without the session's secrets and anything shaped like a key.
        let redacted;
        let line = if line.contains("\"type\":\"error\"") || line.contains("\"type\":\"turn.failed\"") {
            redacted = self.secrets.redact_json_line(line);
            redacted.as_str()
        } else {
            line
        };
        match self.decoder.line(line, texts, &mut self.out) {
            Ok(Some(Signal::ThreadStarted(id))) => self.thread = Some(id),
            Ok(Some(Signal::TurnCompleted(totals))) => self.end = Some(End::Completed(totals)),
            Ok(Some(Signal::TurnFailed {
                message,
                auth_required,
            })) => {
                self.end = Some(End::Failed {
                    message,
                    auth_required,
                });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(line = self.line_no, error = %e, "ignoring a malformed line from codex"),
        }
    }

    /// The turn was cancelled: open tool calls are closed as failed; returns the thread id
    /// if Codex had started one, so the next turn resumes it.
    pub(crate) fn cancelled(&mut self, sink: &dyn SessionSink) -> Option<String> {
        self.transcript.cancelled();
        self.decoder.close_open_tool_calls_because(
            ToolCallStatus::Failed,
            Some("Cancelled before it finished."),
            &mut self.out,
        );
        self.flush(sink);
        self.thread.take()
    }

    /// Codex exited: closes what is still open; returns how the turn ended and the thread id.
    pub(crate) fn finish(mut self, sink: &dyn SessionSink) -> (Option<End>, Option<String>) {
        self.decoder.close_open_tool_calls_because(
            ToolCallStatus::Failed,
            Some("Codex exited before this finished."),
            &mut self.out,
        );
        self.flush(sink);
        let unknown = self.decoder.unknown_counts();
        if !unknown.is_empty() {
            tracing::info!(
                ?unknown,
                "codex sent event or item types acplb does not know; ignored"
            );
        }
        (self.end, self.thread)
    }

    fn flush(&mut self, sink: &dyn SessionSink) {
        for update in self.out.drain(..) {
            sink.update(update);
        }
    }
}

/// The files of a `file_change` line whose old text the decoder will ask for (updated or
/// deleted ones); none when the line is something else or malformed.
fn changed_paths(line: &str) -> Vec<std::path::PathBuf> {
    let Ok(Event::ItemStarted(item) | Event::ItemUpdated(item) | Event::ItemCompleted(item)) =
        serde_json::from_str::<Event>(line)
    else {
        return Vec::new();
    };
    let ItemKind::FileChange(change) = item.kind else {
        return Vec::new();
    };
    change
        .changes
        .into_iter()
        .filter(|c| matches!(c.kind, ChangeKind::Update | ChangeKind::Delete))
        .map(|c| c.path.into())
        .collect()
}
