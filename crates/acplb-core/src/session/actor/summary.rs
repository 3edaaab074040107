//! The shutdown summary (`session-summary` plugin): one more turn, in read-only mode, whose
//! answer is kept in `summary.md` beside the journal instead of being shown; it runs within the
//! time left of the shutdown's limit, and is stopped like a cancel when that runs out.

use std::cell::RefCell;
use std::path::PathBuf;
use std::time::Duration;

use agent_client_protocol::v1::schema::{ContentBlock, SessionUpdate, StopReason};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::SessionActor;
use crate::permission::Mode;
use crate::provider::{PromptInput, SessionSink, SteerInbox, TurnRequest};
use crate::sessions::files::SessionDir;
use crate::sessions::state;

/// How long a summary turn stopped at the limit may take to wind down.
const WIND_DOWN: Duration = Duration::from_secs(1);

/// Keeps the agent's text of the summary turn; shows nothing.
#[derive(Debug, Default)]
struct SummarySink {
    text: RefCell<String>,
}

impl SessionSink for SummarySink {
    fn update(&self, update: SessionUpdate) {
        if let SessionUpdate::AgentMessageChunk(chunk) = update
            && let ContentBlock::Text(t) = chunk.content
        {
            self.text.borrow_mut().push_str(&t.text);
        }
    }
}

/// How the summary went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Summary {
    /// Nothing to summarise (no turn, no thread) or not asked for.
    NotAsked,
    /// Kept at this path.
    Kept(PathBuf),
    /// It did not come (failed, empty, too late); the text says why.
    Missed(String),
}

impl SessionActor {
    /// Asks for the summary and keeps it, if the pipeline wants one and the session had a turn.
    pub(super) async fn summarise(&mut self, deadline: Instant) -> Summary {
        let (Some(prompt), Some(state_dir)) = (self.pipeline.summary_prompt(), self.state_dir.clone()) else {
            return Summary::NotAsked;
        };
        let Some(provider) = self.provider.as_mut() else {
            return Summary::NotAsked;
        };
        if self.turns == 0 || provider.thread_id().is_none() {
            return Summary::NotAsked;
        }
        tracing::info!(session = %self.id, "asking for the session's summary");
        let turn = TurnRequest {
            prompt: PromptInput {
                text: prompt,
                images: Vec::new(),
            },
            mode: Mode::ReadOnly,
            settings: self.settings.clone(),
            developer_instructions: Vec::new(),
            notes: Vec::new(),
            env: Vec::new(),
            steer: SteerInbox::default(),
        };
        let sink = SummarySink::default();
        let cancel = CancellationToken::new();
        let result = {
            let mut run = provider.run_turn(turn, &sink, cancel.clone());
            tokio::select! {
                r = &mut run => Some(r),
                () = tokio::time::sleep_until(deadline) => {
                    cancel.cancel();
                    // Stopped like a cancel, so its processes end; not waited for forever.
                    let _stopped = tokio::time::timeout(WIND_DOWN, run).await;
                    None
                }
            }
        };
        let text = sink.text.into_inner();
        let missed = match result {
            None => Some("it did not come within the shutdown's limit".to_owned()),
            Some(Err(e)) => Some(format!("the turn failed: {e}")),
            Some(Ok(o)) if o.stop_reason != StopReason::EndTurn => {
                Some(format!("the turn ended {:?}", o.stop_reason))
            }
            Some(Ok(_)) if text.trim().is_empty() => Some("the answer was empty".to_owned()),
            Some(Ok(_)) => None,
        };
        if let Some(why) = missed {
            tracing::warn!(session = %self.id, "no summary: {why}");
            return Summary::Missed(why);
        }
        let id = self.id.to_string();
        let path = state::summary_path(&state_dir, &id);
        let body = format!("{}\n", text.trim());
        let target = path.clone();
        let written = tokio::task::spawn_blocking(move || {
            // The summary is written beside the journal, never through a folder that became a
            // link (the temporary file would be made wherever it points).
            SessionDir::open(&state_dir, &id)?;
            state::write_private_atomic(&target, body.as_bytes())
        })
        .await;
        match written {
            Ok(Ok(())) => {
                tracing::info!(session = %self.id, path = %path.display(), "summary kept");
                Summary::Kept(path)
            }
            Ok(Err(e)) => Summary::Missed(format!("writing {} failed: {e}", path.display())),
            Err(e) => Summary::Missed(format!("writing the summary failed: {e}")),
        }
    }
}
