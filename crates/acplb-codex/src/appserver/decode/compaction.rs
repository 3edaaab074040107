//! Codex compacting a thread's context (`contextCompaction` items: `/compact`, or on its own
//! when the context fills up). A client that advertised `session.compaction` sees ACP's
//! `compaction_update`s (in progress, then completed, failed or cancelled with the turn);
//! a `JetBrains` AIR client without them a tool call titled "Compact conversation" marked
//! `_meta.jetbrains.air.contextCompaction`, as the TS peer shows it (ADR 0049); any other client
//! a notice, or a thought where it shows no notices (ADR 0037). Codex's item carries no summary,
//! so no `compaction_summary_chunk` is sent.

use agent_client_protocol::v1::schema::{
    CompactionStatus, CompactionUpdate, SessionUpdate, ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::json;

use super::AppDecoder;
use crate::appserver::text::Kind;
use crate::render::emit;

/// What a client without compaction updates is told once Codex compacted.
const COMPACTED: &str = "Codex compacted the conversation to fit the context window.";

impl AppDecoder {
    /// Whether compactions show as AIR's tool calls (an AIR client without compaction updates).
    fn compaction_calls(&self) -> bool {
        !self.opts.compaction && self.opts.air.is_some()
    }

    /// A compaction started (`item/started`): its update, for a client that shows them.
    pub(super) fn compaction_started(&mut self, id: String, out: &mut Vec<SessionUpdate>) {
        if self.compacting.as_deref() == Some(id.as_str()) {
            return;
        }
        if self.opts.compaction {
            out.push(update(&id, CompactionStatus::InProgress, None));
        } else if self.compaction_calls() {
            out.push(SessionUpdate::ToolCall(call(&id, ToolCallStatus::InProgress)));
        } else {
            return;
        }
        self.compacting = Some(id);
    }

    /// A compaction finished (`item/completed`).
    pub(super) fn compaction_completed(&mut self, id: &str, out: &mut Vec<SessionUpdate>) {
        let started = self.compacting.as_deref() == Some(id);
        if started {
            self.compacting = None;
        }
        if self.opts.compaction {
            out.push(update(id, CompactionStatus::Completed, None));
        } else if self.compaction_calls() {
            out.push(if started {
                ended(id, ToolCallStatus::Completed, None)
            } else {
                SessionUpdate::ToolCall(call(id, ToolCallStatus::Completed))
            });
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
            if self.opts.compaction {
                out.push(update(&id, status, why));
            } else {
                out.push(ended(&id, ToolCallStatus::Failed, why));
            }
        }
    }
}

/// AIR's compaction tool call, as the peer shows it.
fn call(id: &str, status: ToolCallStatus) -> ToolCall {
    ToolCall::new(ToolCallId::new(id.to_owned()), "Compact conversation")
        .kind(ToolKind::Think)
        .status(status)
        .meta(air_mark())
}

/// The end of AIR's compaction call, with `why` when it did not finish.
fn ended(id: &str, status: ToolCallStatus, why: Option<&str>) -> SessionUpdate {
    let mut fields = ToolCallUpdateFields::new().status(status);
    if let Some(why) = why {
        fields = fields.content(vec![why.to_owned().into()]);
    }
    SessionUpdate::ToolCallUpdate(
        ToolCallUpdate::new(ToolCallId::new(id.to_owned()), fields).meta(air_mark()),
    )
}

/// `_meta.jetbrains.air.contextCompaction`, the peer's version 1 of it.
fn air_mark() -> agent_client_protocol::v1::schema::Meta {
    acplb_core::capabilities::air_meta("contextCompaction", json!({ "version": 1 }))
}

fn update(id: &str, status: CompactionStatus, why: Option<&str>) -> SessionUpdate {
    let mut update = CompactionUpdate::new(id.to_owned(), status);
    if let Some(why) = why {
        update = update.error(why.to_owned());
    }
    SessionUpdate::CompactionUpdate(update)
}
