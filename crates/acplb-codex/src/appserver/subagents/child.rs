//! One subagent of a turn as its parent's view keeps it: its thread, its tool call or session,
//! its lines and result, and how its state shows (a tool call update, or its session's state).

use std::fmt::Write as _;

use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::LINES_KEPT;
use super::sessions::{self, Stop};
use crate::appserver::decode::AppDecoder;
use crate::render::emit;

/// One subagent as the editor sees it.
#[derive(Debug)]
pub(super) struct Child {
    pub(super) thread_id: String,
    pub(super) call_id: ToolCallId,
    /// The task the title shows, once known.
    pub(super) task: Option<String>,
    /// Its task in full, as its spawn gave it (its announcement's description).
    pub(super) description: Option<String>,
    /// Which life of it the editor sees (from 1; AIR's re-announcements, `known.rs`).
    pub(super) generation: u32,
    /// Its session was shown ended.
    pub(super) ended_shown: bool,
    /// It works on after its parent's turn ended, shown between turns (`parked.rs`).
    pub(super) parked: bool,
    /// The child's running turn.
    pub(super) turn_id: Option<String>,
    pub(super) status: ToolCallStatus,
    pub(super) lines: Vec<String>,
    /// Lines dropped from the front to keep [`LINES_KEPT`].
    pub(super) dropped: usize,
    /// The child's last message: its result.
    pub(super) result: Option<String>,
    /// The child's items, for its approval requests.
    pub(super) decoder: AppDecoder,
    /// Items the editor was asked about: their tool calls end when the items do.
    pub(super) asked: Vec<(String, ToolCallId)>,
    /// `_meta.jetbrains.air.subagent: true` on its reports, for an AIR client (ADR 0049).
    pub(super) meta: Option<Meta>,
    /// Its own session's id, when it is shown as one (ADR 0055); else it is a tool call.
    pub(super) session: Option<String>,
    /// Started or given work by what this turn saw, and not yet running: it will.
    pub(super) due: bool,
    /// What it asked the editor that is not answered yet.
    pub(super) open_asks: usize,
    /// The thread that spawned it, once a spawn named it (its parent's, or another child's:
    /// `tree.rs`).
    pub(super) spawner: Option<String>,
    /// Why its work stopped, once it has.
    pub(super) stop: Option<Stop>,
}

impl Child {
    /// Its work stopped (`stop`), its call ending as `status` with the line `why`.
    pub(super) fn end(&mut self, status: ToolCallStatus, stop: Stop, why: String) {
        self.status = status;
        self.stop = Some(stop);
        self.push(why);
    }

    pub(super) fn push(&mut self, line: String) {
        self.lines.push(line);
        if self.lines.len() > LINES_KEPT {
            self.lines.remove(0);
            self.dropped += 1;
        }
    }

    /// The child's call as it is now: status, lines and, once it ended, its result.
    pub(super) fn show(&mut self, out: &mut Vec<SessionUpdate>) {
        if let Some(update) = self.session_state() {
            self.ended_shown |= !is_open(self.status);
            out.push(update);
            return;
        }
        let mut text = String::new();
        if self.dropped > 0 {
            let _infallible = writeln!(text, "… {} earlier lines", self.dropped);
        }
        for line in &self.lines {
            let _infallible = writeln!(text, "- {line}");
        }
        let mut fields = ToolCallUpdateFields::new().status(self.status);
        if !text.is_empty() {
            fields = fields.content(vec![text.trim_end().to_owned().into()]);
        }
        if !is_open(self.status) {
            fields = fields.raw_output(json!({ "threadId": self.thread_id, "result": self.result }));
        }
        let update = ToolCallUpdate::new(self.call_id.clone(), fields).meta(self.meta.clone());
        out.push(SessionUpdate::ToolCallUpdate(update));
    }

    /// Its session's state as it is now (`None` when it is a tool call): running while open,
    /// cancellable by the editor while a turn of its runs within a turn of its parent's.
    pub(super) fn session_state(&self) -> Option<SessionUpdate> {
        let session = self.session.as_deref()?;
        let stop = if is_open(self.status) {
            None
        } else {
            self.stop.as_ref()
        };
        let cancel = stop.is_none() && self.turn_id.is_some() && !self.parked;
        Some(sessions::state(session, stop, cancel))
    }

    /// An item the editor was asked about ended: its tool call does too.
    pub(super) fn asked_ended(&mut self, item: &Value, out: &mut Vec<SessionUpdate>) {
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            return;
        };
        if let Some(index) = self.asked.iter().position(|(item, _)| item == id) {
            let (_, call_id) = self.asked.remove(index);
            let failed = matches!(
                item.get("status").and_then(Value::as_str),
                Some("failed" | "declined")
            );
            let fields = ToolCallUpdateFields::new().status(emit::ended(failed));
            emit::tool_finished(out, call_id, fields);
        }
    }
}

pub(super) fn is_open(status: ToolCallStatus) -> bool {
    matches!(status, ToolCallStatus::InProgress | ToolCallStatus::Pending)
}
