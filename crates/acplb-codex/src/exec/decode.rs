//! Pure translation of `codex exec --json` events into ACP `session/update`s.
//!
//! The [`Decoder`] is fed one stdout line at a time (and, separately, stderr lines) and appends
//! the resulting updates to a caller-owned vector; turn-level facts (thread id, usage, failure)
//! come back as a [`Signal`]. It does no I/O: file contents come through [`FileTexts`].

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdateFields,
};
use serde::Serialize;

pub use crate::render::DecoderOptions;
pub use crate::render::edits::{FileTexts, NoFileTexts, OldText};
pub use crate::render::usage::{Totals, turn_delta};

use super::refusals;
use crate::items::{Event, Item, ItemKind, TodoList};
use crate::render::Warnings;
use crate::render::edits;
use crate::render::emit::{self, LastSent};
use crate::render::{live, tools};

/// A turn-level fact the caller acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "signal", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Signal {
    /// `thread.started`: the thread id, for `codex exec resume`.
    ThreadStarted(String),
    /// `turn.completed`: token totals as reported, cumulative for the thread (see
    /// [`turn_delta`]).
    TurnCompleted(Totals),
    /// `turn.failed`.
    TurnFailed {
        /// Codex's message.
        message: String,
        /// Whether the failure was an authentication error (HTTP 401).
        auth_required: bool,
    },
}

/// Errors of [`Decoder::line`]; the caller logs them and goes on with the next line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// A stdout line was not a JSON event object.
    #[error("malformed codex event on line {line_no}: {message}")]
    Json {
        /// 1-based number of the line among those given to the decoder.
        line_no: usize,
        /// The parser's message.
        message: String,
    },
}

/// A tool call shown as started and not yet finished.
#[derive(Debug)]
struct OpenCall {
    item_id: String,
    tool_call_id: ToolCallId,
    befores: edits::Befores,
    /// Whether it is shown as a terminal, which must then be told it ended.
    terminal: bool,
}

/// Decodes the event stream of one `codex exec` process.
#[derive(Debug)]
pub struct Decoder {
    opts: DecoderOptions,
    line_no: usize,
    /// A top-level `error` held back until the next line shows whether `turn.failed` repeats it.
    pending_error: Option<String>,
    warnings: Warnings,
    open: Vec<OpenCall>,
    unknown: BTreeMap<String, u64>,
    last_sent: LastSent,
    refusals: usize,
    /// The plan shown last, so an identical repeat is not sent again.
    last_plan: Option<TodoList>,
    /// The notice that exec does not show subagents' work was given.
    collab_noticed: bool,
}

impl Decoder {
    /// A decoder for one process (one turn).
    pub fn new(options: DecoderOptions) -> Self {
        Self {
            opts: options,
            line_no: 0,
            pending_error: None,
            warnings: Warnings::default(),
            open: Vec::new(),
            unknown: BTreeMap::new(),
            last_sent: LastSent::Nothing,
            refusals: 0,
            last_plan: None,
            collab_noticed: false,
        }
    }

    /// Decodes one stdout line, appending updates to `out`. Blank lines are ignored.
    pub fn line(
        &mut self,
        line: &str,
        files: &mut dyn FileTexts,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<Option<Signal>, DecodeError> {
        self.line_no += 1;
        let text = line.trim_ascii();
        if text.is_empty() {
            return Ok(None);
        }
        let event: Event = serde_json::from_str(text).map_err(|e| DecodeError::Json {
            line_no: self.line_no,
            message: e.to_string(),
        })?;
        let signal = self.event(event, files, out);
        self.remember_last(out);
        Ok(signal)
    }

    /// Decodes one stderr line: patches Codex refused become failed Edit tool calls; every other
    /// line is ignored.
    pub fn stderr_line(&mut self, line: &str, out: &mut Vec<SessionUpdate>) {
        if let Some(reason) = refusals::command_refusal(line) {
            self.refusals += 1;
            let id = ToolCallId::new(format!(
                "{}command_refused_{}",
                self.opts.id_prefix, self.refusals
            ));
            emit::tool_started(out, refusals::refused_command_call(id, reason));
            self.remember_last(out);
            return;
        }
        let Some(refusal) = refusals::patch_refusal(line) else {
            return;
        };
        self.refusals += 1;
        let id = ToolCallId::new(format!("{}patch_refused_{}", self.opts.id_prefix, self.refusals));
        emit::tool_started(out, refusals::refused_call(id, refusal, &self.opts));
        self.remember_last(out);
    }

    /// Shows a held-back `error` as a warning; call when the stream ends.
    pub fn finish(&mut self, out: &mut Vec<SessionUpdate>) {
        self.flush_pending_error(out);
        self.remember_last(out);
    }

    /// Ends every tool call still open with `status` (for cancellation or a crashed process),
    /// after showing any held-back `error`.
    pub fn close_open_tool_calls(&mut self, status: ToolCallStatus, out: &mut Vec<SessionUpdate>) {
        self.close_open_tool_calls_because(status, None, out);
    }

    /// Like [`Decoder::close_open_tool_calls`], with `note` (why they ended) as their content.
    pub fn close_open_tool_calls_because(
        &mut self,
        status: ToolCallStatus,
        note: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) {
        self.flush_pending_error(out);
        for call in self.open.drain(..) {
            let mut fields = ToolCallUpdateFields::new().status(status);
            if let Some(note) = note {
                fields = fields.content(vec![note.into()]);
            }
            if call.terminal {
                out.push(SessionUpdate::ToolCallUpdate(live::ended_terminal(
                    &call.tool_call_id,
                    fields,
                )));
            } else {
                emit::tool_finished(out, call.tool_call_id, fields);
            }
        }
        self.remember_last(out);
    }

    /// Sends the plan unless it is the one shown last (Codex repeats it at turn end).
    fn plan(&mut self, out: &mut Vec<SessionUpdate>, list: &TodoList) {
        if self.last_plan.as_ref() != Some(list) {
            emit::plan(out, list);
            self.last_plan = Some(list.clone());
        }
    }

    /// How often each unknown event type (`event:<type>`) and item type (`item:<type>`) was seen.
    pub fn unknown_counts(&self) -> &BTreeMap<String, u64> {
        &self.unknown
    }

    fn event(
        &mut self,
        event: Event,
        files: &mut dyn FileTexts,
        out: &mut Vec<SessionUpdate>,
    ) -> Option<Signal> {
        if let Event::TurnFailed { message } = &event
            && self.pending_error.as_ref() == Some(message)
        {
            // `turn.failed` repeats the `error` just before it: show the failure only once.
            self.pending_error = None;
        }
        self.flush_pending_error(out);
        if !matches!(event, Event::Error { .. }) {
            self.warnings.forget();
        }
        match event {
            Event::ThreadStarted { thread_id } => return Some(Signal::ThreadStarted(thread_id)),
            Event::TurnStarted => {}
            Event::ItemStarted(item) => self.item_started(item, files, out),
            Event::ItemUpdated(item) => self.item_updated(item, files, out),
            Event::ItemCompleted(item) => self.item_completed(item, files, out),
            Event::TurnCompleted { usage } => return Some(Signal::TurnCompleted(usage.into())),
            Event::TurnFailed { message } => {
                return Some(Signal::TurnFailed {
                    auth_required: crate::outcome::is_auth_error(&message),
                    message,
                });
            }
            Event::Error { message } => self.pending_error = Some(message),
            Event::Unknown { event_type } => self.count_unknown("event", &event_type),
        }
        None
    }

    fn item_started(&mut self, item: Item, files: &mut dyn FileTexts, out: &mut Vec<SessionUpdate>) {
        if self.is_open(&item.id) {
            return;
        }
        let id = self.tool_call_id(&item.id);
        let (call, befores) = match &item.kind {
            ItemKind::CommandExecution(c) => {
                let call = tools::command_call(id, c, &self.opts);
                let call = if self.opts.terminal {
                    live::open_terminal(call, &self.opts.cwd)
                } else {
                    call
                };
                (call, Vec::new())
            }
            ItemKind::McpToolCall(m) => (tools::mcp_call(id, m), Vec::new()),
            ItemKind::WebSearch(w) => (tools::web_call(id, w), Vec::new()),
            ItemKind::FileChange(f) => (edits::edit_call(id, f, &self.opts), edits::befores(f, files)),
            ItemKind::TodoList(list) => return self.plan(out, list),
            ItemKind::CollabToolCall(c) => (self.collab_call(id, c, out), Vec::new()),
            ItemKind::Unknown { item_type } => return self.count_unknown("item", item_type),
            // Messages, reasoning and error items are shown once, when completed.
            ItemKind::AgentMessage(_) | ItemKind::Reasoning(_) | ItemKind::Error(_) => return,
        };
        self.open.push(OpenCall {
            item_id: item.id,
            tool_call_id: call.tool_call_id.clone(),
            befores,
            terminal: self.opts.terminal && matches!(item.kind, ItemKind::CommandExecution(_)),
        });
        emit::tool_started(out, call);
    }

    fn item_updated(&mut self, item: Item, files: &mut dyn FileTexts, out: &mut Vec<SessionUpdate>) {
        // Only to-do lists change in place; a tool item updated before it was seen starts it.
        self.item_started(item, files, out);
    }

    fn item_completed(&mut self, item: Item, files: &mut dyn FileTexts, out: &mut Vec<SessionUpdate>) {
        let message_id = self.message_id(&item.id);
        let (open_id, open_befores) = match self.take_open(&item.id) {
            Some(call) => (Some(call.tool_call_id), Some(call.befores)),
            None => (None, None),
        };
        let opts = &self.opts;
        match item.kind {
            ItemKind::AgentMessage(m) => self.agent_text(m.text, message_id, out),
            ItemKind::Reasoning(r) => self.thought(r.text, message_id, out),
            ItemKind::Error(e) => self.warning(&e.message, out),
            ItemKind::TodoList(list) => self.plan(out, &list),
            ItemKind::Unknown { item_type } => self.count_unknown("item", &item_type),
            ItemKind::CommandExecution(mut c) if opts.terminal => {
                let output = std::mem::take(&mut c.aggregated_output);
                let fields = tools::command_finish(&mut c, opts);
                let call = || tools::command_call(message_id.into(), &c, opts);
                live::finished_terminal(open_id, call, &output, c.exit_code, fields, opts, out);
            }
            ItemKind::CommandExecution(mut c) => {
                let fields = tools::command_finish(&mut c, opts);
                finish_call(
                    open_id,
                    fields,
                    || tools::command_call(message_id.into(), &c, opts),
                    out,
                );
            }
            ItemKind::McpToolCall(m) => {
                let fields = tools::mcp_finish(&m, opts);
                finish_call(open_id, fields, || tools::mcp_call(message_id.into(), &m), out);
            }
            ItemKind::WebSearch(w) => {
                let fields = tools::web_finish(&w);
                finish_call(open_id, fields, || tools::web_call(message_id.into(), &w), out);
            }
            ItemKind::CollabToolCall(c) => self.collab_finished(open_id, message_id, &c, out),
            ItemKind::FileChange(f) => {
                let befores = open_befores.unwrap_or_else(|| edits::befores(&f, files));
                let fields = edits::edit_finish(&f, befores, files, opts);
                finish_call(
                    open_id,
                    fields,
                    || edits::edit_call(message_id.into(), &f, opts),
                    out,
                );
            }
        }
    }

    fn agent_text(&mut self, text: String, message_id: String, out: &mut Vec<SessionUpdate>) {
        if !text.is_empty() {
            let text = self.separated(LastSent::AgentText, text, out);
            emit::agent_text(out, text, message_id);
        }
    }

    fn thought(&mut self, text: String, message_id: String, out: &mut Vec<SessionUpdate>) {
        if !text.is_empty() {
            let text = self.separated(LastSent::Thought, text, out);
            emit::thought(out, text, message_id);
        }
    }

    /// Starts `text` with a blank line when it directly follows a chunk of the same kind, so
    /// clients that ignore `messageId` do not run two messages together.
    fn separated(&self, kind: LastSent, text: String, out: &[SessionUpdate]) -> String {
        let last = out.last().map_or(self.last_sent, LastSent::of);
        if last == kind { format!("\n\n{text}") } else { text }
    }

    /// A non-fatal problem: a notice when the client shows them, else a labelled thought.
    fn warning(&mut self, message: &str, out: &mut Vec<SessionUpdate>) {
        if let Some(text) = self.warnings.show(message, self.opts.notices, out) {
            let text = self.separated(LastSent::Thought, text, out);
            let id = format!("{}warning_{}", self.opts.id_prefix, self.line_no);
            emit::thought(out, text, id);
        }
    }

    fn flush_pending_error(&mut self, out: &mut Vec<SessionUpdate>) {
        if let Some(message) = self.pending_error.take() {
            self.warning(&message, out);
        }
    }

    fn remember_last(&mut self, out: &[SessionUpdate]) {
        if let Some(last) = out.last() {
            self.last_sent = LastSent::of(last);
        }
    }

    fn count_unknown(&mut self, what: &str, name: &str) {
        let count = self.unknown.entry(format!("{what}:{name}")).or_insert(0);
        if *count == 0 {
            tracing::warn!(kind = what, name, "ignoring unknown codex {what} type");
        }
        *count += 1;
    }

    fn is_open(&self, item_id: &str) -> bool {
        self.open.iter().any(|c| c.item_id == item_id)
    }

    fn take_open(&mut self, item_id: &str) -> Option<OpenCall> {
        let index = self.open.iter().position(|c| c.item_id == item_id)?;
        Some(self.open.remove(index))
    }

    fn tool_call_id(&self, item_id: &str) -> ToolCallId {
        ToolCallId::new(self.message_id(item_id))
    }

    fn message_id(&self, item_id: &str) -> String {
        format!("{}{item_id}", self.opts.id_prefix)
    }
}

/// Finishes a started call with an update, or sends a never-started one whole.
fn finish_call(
    open_id: Option<ToolCallId>,
    fields: ToolCallUpdateFields,
    call: impl FnOnce() -> ToolCall,
    out: &mut Vec<SessionUpdate>,
) {
    if let Some(id) = open_id {
        emit::tool_finished(out, id, fields);
    } else {
        let mut call = call();
        call.update(fields);
        emit::tool_started(out, call);
    }
}

mod collab;
#[cfg(test)]
mod tests;
