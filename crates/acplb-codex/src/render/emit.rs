//! Intent-named constructors of the ACP updates the decoders send (exec's and app-server's); no
//! decoder builds a `SessionUpdate` directly.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, MessageId, Notice, NoticeSeverity, Plan, PlanEntry, PlanEntryPriority,
    PlanEntryStatus, SessionUpdate, ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, UsageUpdate,
};

use crate::items::TodoList;

/// What kind of update was sent last, so consecutive agent messages can be kept apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum LastSent {
    #[default]
    Nothing,
    AgentText,
    Thought,
    Other,
}

impl LastSent {
    pub(crate) fn of(update: &SessionUpdate) -> Self {
        match update {
            SessionUpdate::AgentMessageChunk(_) => Self::AgentText,
            SessionUpdate::AgentThoughtChunk(_) => Self::Thought,
            _ => Self::Other,
        }
    }
}

/// A complete agent message (Codex exec sends no deltas), or one streamed piece of one.
pub(crate) fn agent_text(out: &mut Vec<SessionUpdate>, text: String, message_id: String) {
    out.push(SessionUpdate::AgentMessageChunk(chunk(text, message_id)));
}

/// A complete reasoning summary (or one streamed piece of one), or a warning shown as a thought.
pub(crate) fn thought(out: &mut Vec<SessionUpdate>, text: String, message_id: String) {
    out.push(SessionUpdate::AgentThoughtChunk(chunk(text, message_id)));
}

fn chunk(text: String, message_id: String) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text)).message_id(MessageId::new(message_id))
}

/// A non-fatal problem, for clients that show notices.
pub(crate) fn warning_notice(out: &mut Vec<SessionUpdate>, title: String) {
    out.push(SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, title)));
}

/// A tool call the user has not seen yet (started, or already finished).
/// The status a finished tool call ends with.
pub(crate) fn ended(failed: bool) -> ToolCallStatus {
    if failed {
        ToolCallStatus::Failed
    } else {
        ToolCallStatus::Completed
    }
}

pub(crate) fn tool_started(out: &mut Vec<SessionUpdate>, call: ToolCall) {
    out.push(SessionUpdate::ToolCall(call));
}

/// The final state of a tool call the user has seen start.
pub(crate) fn tool_finished(out: &mut Vec<SessionUpdate>, id: ToolCallId, fields: ToolCallUpdateFields) {
    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
}

/// What a running tool call shows now (its output so far, a progress message).
pub(crate) fn tool_progress(out: &mut Vec<SessionUpdate>, id: ToolCallId, fields: ToolCallUpdateFields) {
    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
}

/// A notice that is not a problem (the context was compacted), for clients that show notices.
pub(crate) fn info_notice(out: &mut Vec<SessionUpdate>, title: String) {
    out.push(SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, title)));
}

/// How full the context window is: `used` of `size` tokens.
pub(crate) fn usage(out: &mut Vec<SessionUpdate>, used: u64, size: u64) {
    out.push(SessionUpdate::UsageUpdate(UsageUpdate::new(used, size)));
}

/// The whole plan with the status Codex gave each step (clients replace the previous one).
pub(crate) fn plan_steps(out: &mut Vec<SessionUpdate>, steps: Vec<(String, PlanEntryStatus)>) {
    let entries = steps
        .into_iter()
        .map(|(step, status)| PlanEntry::new(step, PlanEntryPriority::Medium, status))
        .collect();
    out.push(SessionUpdate::Plan(Plan::new(entries)));
}

/// The whole plan (clients replace the previous one): done entries completed, the first open
/// one in progress (exec does not say which is), the rest pending.
pub(crate) fn plan(out: &mut Vec<SessionUpdate>, list: &TodoList) {
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
