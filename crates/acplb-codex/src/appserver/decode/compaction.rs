//! Codex compacting a thread's context (`contextCompaction` items: `/compact`, or on its own
//! when the context fills up). A client that advertised `session.compaction` sees ACP's
//! `compaction_update`s (in progress, then completed, failed or cancelled with the turn);
//! any other client a notice, or a thought where it shows no notices (ADR 0037). Codex's
//! item carries no summary, so no `compaction_summary_chunk` is sent.

use agent_client_protocol::v1::schema::{CompactionStatus, CompactionUpdate, SessionUpdate};

use super::AppDecoder;
use crate::appserver::text::Kind;
use crate::render::emit;

/// What a client without compaction updates is told once Codex compacted.
const COMPACTED: &str = "Codex compacted the conversation to fit the context window.";

impl AppDecoder {
    /// A compaction started (`item/started`): its update, for a client that shows them.
    pub(super) fn compaction_started(&mut self, id: String, out: &mut Vec<SessionUpdate>) {
        if !self.opts.compaction || self.compacting.as_deref() == Some(id.as_str()) {
            return;
        }
        out.push(update(&id, CompactionStatus::InProgress, None));
        self.compacting = Some(id);
    }

    /// A compaction finished (`item/completed`).
    pub(super) fn compaction_completed(&mut self, id: &str, out: &mut Vec<SessionUpdate>) {
        if self.opts.compaction {
            if self.compacting.as_deref() == Some(id) {
                self.compacting = None;
            }
            out.push(update(id, CompactionStatus::Completed, None));
        } else if self.opts.notices {
            emit::info_notice(out, COMPACTED.to_owned());
        } else {
            self.streams.completed(Kind::Thought, id, COMPACTED, out);
        }
    }

    /// The turn ended, or was stopped, with a compaction still running: it ends `status`,
    /// with `why`.
    pub(super) fn compaction_ended(
        &mut self,
        status: CompactionStatus,
        why: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) {
        if let Some(id) = self.compacting.take() {
            out.push(update(&id, status, why));
        }
    }
}

fn update(id: &str, status: CompactionStatus, why: Option<&str>) -> SessionUpdate {
    let mut update = CompactionUpdate::new(id.to_owned(), status);
    if let Some(why) = why {
        update = update.error(why.to_owned());
    }
    SessionUpdate::CompactionUpdate(update)
}
