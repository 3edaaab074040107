//! A history as the editor sees it again (`session/load`): each prompt as user message chunks,
//! then every update as it was sent; a turn that never ended is closed first ([`repair`]).

use std::collections::HashMap;

use agent_client_protocol::schema::MaybeUndefined;
use agent_client_protocol::v1::schema::{
    CompactionStatus, ContentBlock, ContentChunk, Notice, NoticeSeverity, SessionUpdate, StateUpdate,
    SubagentUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    UnknownStateUpdate,
};

use super::as_text::AsText;
use super::history::History;
use super::record::{Record, now};
use crate::provider::route;

/// Why a turn ended without an end, as the editor is told.
pub const INTERRUPTED: &str = "acplb stopped before this turn ended";

/// The records that close a turn left open when acplb stopped (crash, kill): each of its tool
/// calls still pending or running fails with that reason (in the subagent session it was of,
/// ADR 0055), each subagent session still running is told its state is unknown, then the turn
/// ends `interrupted`. Empty when every turn ended. The caller appends them to the journal and
/// to `history`.
pub fn repair(history: &History) -> Vec<Record> {
    let Some(open) = history.facts().open_turn else {
        return Vec::new();
    };
    let mut in_turn = false;
    let mut calls: Vec<(String, Option<String>)> = Vec::new();
    let mut status: HashMap<String, ToolCallStatus> = HashMap::new();
    // Subagent sessions of the turn, and whether each still ran.
    let mut children: Vec<(String, bool)> = Vec::new();
    for record in &history.records {
        match record {
            Record::Prompt {
                turn, steered: false, ..
            } => in_turn = *turn == open,
            Record::Update { u } if in_turn => match u.as_ref() {
                SessionUpdate::ToolCall(call) => {
                    let id = call.tool_call_id.to_string();
                    if !status.contains_key(&id) {
                        calls.push((id.clone(), route::of(u).map(str::to_owned)));
                    }
                    status.insert(id, call.status);
                }
                SessionUpdate::ToolCallUpdate(update) => {
                    let id = update.tool_call_id.to_string();
                    if let Some(s) = update.fields.status {
                        if !status.contains_key(&id) {
                            calls.push((id.clone(), route::of(u).map(str::to_owned)));
                        }
                        status.insert(id, s);
                    }
                }
                SessionUpdate::SubagentUpdate(child) => {
                    let id = child.session_id.to_string();
                    let runs = match &child.state {
                        MaybeUndefined::Value(StateUpdate::Running(_) | StateUpdate::RequiresAction(_)) => {
                            Some(true)
                        }
                        MaybeUndefined::Value(_) | MaybeUndefined::Null => Some(false),
                        MaybeUndefined::Undefined => None,
                    };
                    match children.iter_mut().find(|(c, _)| *c == id) {
                        Some((_, ran)) => *ran = runs.unwrap_or(*ran),
                        None => children.push((id, runs.unwrap_or(false))),
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    let mut records: Vec<Record> = calls
        .into_iter()
        .filter(|(id, _)| {
            matches!(
                status.get(id),
                Some(ToolCallStatus::Pending | ToolCallStatus::InProgress)
            )
        })
        .map(|(id, child)| {
            let text = ContentBlock::from(format!("Interrupted: {INTERRUPTED}."));
            let fields = ToolCallUpdateFields::new()
                .status(ToolCallStatus::Failed)
                .content(vec![ToolCallContent::from(text)]);
            let mut u = SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields));
            if let Some(child) = child {
                let _marked = route::to(&mut u, &child);
            }
            Record::Update { u: Box::new(u) }
        })
        .collect();
    records.extend(children.into_iter().filter(|(_, runs)| *runs).map(|(id, _)| {
        let unknown = SubagentUpdate::new(id).state(StateUpdate::Unknown(UnknownStateUpdate::new()));
        Record::Update {
            u: Box::new(SessionUpdate::SubagentUpdate(unknown)),
        }
    }));
    records.push(Record::TurnEnd {
        turn: open,
        at: now(),
        stop: "interrupted".into(),
        error: Some(INTERRUPTED.into()),
    });
    records
}

/// The updates that show `history` again, in the order the editor first saw them. A turn that
/// was interrupted gets a line saying so: a notice where the client shows them, else text.
/// Commands recorded as terminals show as text unless the client shows `terminals`.
pub fn updates(history: &History, shows_notices: bool, terminals: bool) -> Vec<SessionUpdate> {
    let mut out = Vec::with_capacity(history.records.len());
    let mut as_text = AsText::default();
    for record in &history.records {
        match record {
            Record::Prompt { prompt, .. } => out.extend(
                prompt
                    .iter()
                    .map(|block| SessionUpdate::UserMessageChunk(ContentChunk::new(block.clone()))),
            ),
            Record::Update { u } if terminals => out.push(u.as_ref().clone()),
            Record::Update { u } => out.extend(as_text.convert(u.as_ref().clone())),
            Record::TurnEnd { stop, .. } if stop == "interrupted" => out.push(interrupted(shows_notices)),
            Record::Lost { count, error, .. } => out.push(lost(*count, error, shows_notices)),
            _ => {}
        }
    }
    out
}

/// `updates` for a client that did not advertise `session.compaction` (a journal written for
/// one that did): each completed compaction becomes the line such a client is shown live, a
/// failed one a warning; the rest of a compaction's updates are left out (ADR 0037).
pub fn without_compaction(updates: Vec<SessionUpdate>, shows_notices: bool) -> Vec<SessionUpdate> {
    updates
        .into_iter()
        .filter_map(|update| match update {
            SessionUpdate::CompactionUpdate(c) => match c.status {
                CompactionStatus::Completed => Some(if shows_notices {
                    SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, COMPACTED))
                } else {
                    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(COMPACTED)))
                }),
                CompactionStatus::Failed => {
                    let why = c.error.take().unwrap_or_else(|| "no reason given".to_owned());
                    Some(warning("Compacting the conversation failed", &why, shows_notices))
                }
                _ => None,
            },
            SessionUpdate::CompactionSummaryChunk(_) => None,
            other => Some(other),
        })
        .collect()
}

/// What a client without compaction updates is told of a compaction.
const COMPACTED: &str = "The conversation was compacted to fit the context window.";

fn interrupted(shows_notices: bool) -> SessionUpdate {
    let title = "This turn was interrupted";
    let detail = format!("{INTERRUPTED}; what it did until then is shown above.");
    warning(title, &detail, shows_notices)
}

/// Where the journal lost records: what is shown around it is not all there was.
fn lost(count: u64, error: &str, shows_notices: bool) -> SessionUpdate {
    let title = "Part of this session was not recorded";
    let detail = format!(
        "{count} record{} could not be written to the session journal ({error}); what happened here is not all shown.",
        if count == 1 { "" } else { "s" }
    );
    warning(title, &detail, shows_notices)
}

/// A warning: a notice where the client shows them, else a line of agent text.
pub(crate) fn warning(title: &str, detail: &str, shows_notices: bool) -> SessionUpdate {
    if shows_notices {
        SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, title).description(detail))
    } else {
        let text = format!("\n\n_{title}: {detail}_\n\n");
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text)))
    }
}
