//! Intent-named constructors of the ACP updates the decoder sends; no other code builds a
//! `SessionUpdate` directly.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, MessageId, Notice, NoticeSeverity, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, ToolCall, ToolCallId, ToolCallUpdate, ToolCallUpdateFields,
};

use crate::wire::TodoList;

/// What kind of update was sent last, so consecutive agent messages can be kept apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum LastSent {
    #[default]
    Nothing,
    AgentText,
    Thought,
    Other,
}

impl LastSent {
    pub(super) fn of(update: &SessionUpdate) -> Self {
        match update {
            SessionUpdate::AgentMessageChunk(_) => Self::AgentText,
            SessionUpdate::AgentThoughtChunk(_) => Self::Thought,
            _ => Self::Other,
        }
    }
}

/// A complete agent message (Codex exec sends no deltas).
pub(super) fn agent_text(out: &mut Vec<SessionUpdate>, text: String, message_id: String) {
    out.push(SessionUpdate::AgentMessageChunk(chunk(text, message_id)));
}

/// A complete reasoning summary, or a warning shown as a thought.
pub(super) fn thought(out: &mut Vec<SessionUpdate>, text: String, message_id: String) {
    out.push(SessionUpdate::AgentThoughtChunk(chunk(text, message_id)));
}

fn chunk(text: String, message_id: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text)).message_id(MessageId::new(message_id))
}

/// A non-fatal problem, for clients that show notices.
pub(super) fn warning_notice(out: &mut Vec<SessionUpdate>, title: String) {
    out.push(SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, title)));
}

/// A tool call the user has not seen yet (started, or already finished).
pub(super) fn tool_started(out: &mut Vec<SessionUpdate>, call: ToolCall) {
    out.push(SessionUpdate::ToolCall(call));
}

/// The final state of a tool call the user has seen start.
pub(super) fn tool_finished(out: &mut Vec<SessionUpdate>, id: ToolCallId, fields: ToolCallUpdateFields) {
    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
}

/// The whole plan (clients replace the previous one): done entries completed, the first open
/// one in progress (exec does not say which is), the rest pending.
pub(super) fn plan(out: &mut Vec<SessionUpdate>, list: &TodoList) {
    let current = list.items.iter().position(|e| !e.completed);
    let entries = list
        .items
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let status = if entry.completed {
                PlanEntryStatus::Completed
            } else if Some(i) == current {
                PlanEntryStatus::InProgress
            } else {
                PlanEntryStatus::Pending
            };
            PlanEntry::new(entry.text.clone(), PlanEntryPriority::Medium, status)
        })
        .collect();
    out.push(SessionUpdate::Plan(Plan::new(entries)));
}
