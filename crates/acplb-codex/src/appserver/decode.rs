//! Pure translation of the `codex app-server` notifications of one thread into ACP
//! `session/update`s, streamed as they come.
//!
//! The [`AppDecoder`] is fed one server notification at a time (the caller already knows it
//! belongs to this session's thread) and appends the resulting updates to a caller-owned vector;
//! turn-level facts come back as an [`AppSignal`]. It does no I/O. Create one per turn with an
//! `id_prefix` unique to the turn, as for exec's decoder: tool call and message ids are the
//! prefix followed by Codex's item id.
//!
//! Text deltas become chunks at once and the completed item adds only what they left out;
//! command output streams into its tool call (`render/live.rs`, ADR 0033): appended to the
//! client's terminal, or as text content whose updates, each with the whole bounded output so
//! far, are coalesced. Tool calls are
//! drawn by the renderers exec's decoder draws with too (`render/`). Notification methods come
//! from the method table (`protocol/methods.rs`). Unknown methods and item types, and messages
//! whose fields have the wrong type, are counted ([`AppDecoder::unknown_counts`]) and otherwise ignored.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    CompactionStatus, PlanEntryStatus, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdateFields,
};
use serde_json::Value;

use acplb_core::provider::{AIR_SESSION_FAILURE, FailureKind, Incident, Severity};

use super::failure;
use super::protocol::methods;
pub use super::signal::{AppSignal, TurnEnd};
use super::text::{Kind, Streams};
use super::wire::{self, read};
pub use crate::render::DecoderOptions;
use crate::render::live::LiveOutput;
use crate::render::{Warnings, emit, usage::Totals};
use items::item;

mod background;
pub(crate) use background::TaskEnd;
mod compaction;
mod items;
mod plan;

/// A tool call shown as started and not yet finished.
#[derive(Debug)]
pub(super) struct OpenCall {
    pub(super) item_id: String,
    /// The call as the editor sees it now.
    pub(super) call: ToolCall,
    /// What a command printed so far, as the client sees it.
    output: Option<LiveOutput>,
    /// Server and tool of an MCP call.
    pub(super) mcp: Option<(String, String)>,
    /// Codex's process id of a command, which may outlive its turn (`background.rs`).
    process: Option<String>,
    /// Announced to a `JetBrains` AIR client as an async task (`background.rs`), and whether
    /// the user stopped it.
    task: Option<background::Task>,
}

impl OpenCall {
    /// What the call shows: its content, and the output a command printed so far (text
    /// updates are coalesced: the last one sent may not show all of it).
    fn shown(&self) -> Vec<agent_client_protocol::v1::schema::ToolCallContent> {
        let mut content = self.call.content.clone();
        if let Some(text) = self
            .output
            .as_ref()
            .and_then(LiveOutput::text)
            .filter(|t| !t.is_empty())
        {
            content.push(text.fenced().into());
        }
        content
    }
}

/// Decodes the notifications of one turn of one thread.
#[derive(Debug)]
pub struct AppDecoder {
    opts: DecoderOptions,
    streams: Streams,
    open: Vec<OpenCall>,
    unknown: BTreeMap<String, u64>,
    last_plan: Option<Vec<wire::PlanStep>>,
    /// An `error` that does not retry, held back until `turn/completed` shows whether the
    /// failure repeats it.
    pending_error: Option<String>,
    warnings: Warnings,
    /// Warnings shown as thoughts, for their ids.
    warning_thoughts: usize,
    /// The compaction running, by the id its updates carry (`compaction.rs`).
    compacting: Option<String>,
    /// Proposed plans streaming as `plan_update`s (`plan.rs`).
    plans: Vec<plan::Proposed>,
    /// What kind of failure the turn's last error was (`failure.rs`).
    failure_kind: FailureKind,
    /// The failure incident an AIR client was told of in this turn (ADR 0054).
    incident: Option<Incident>,
}

impl AppDecoder {
    /// A decoder for one turn.
    pub fn new(options: DecoderOptions) -> Self {
        Self {
            opts: options,
            streams: Streams::new(),
            open: Vec::new(),
            unknown: BTreeMap::new(),
            last_plan: None,
            pending_error: None,
            warnings: Warnings::default(),
            warning_thoughts: 0,
            compacting: None,
            plans: Vec::new(),
            failure_kind: FailureKind::default(),
            incident: None,
        }
    }

    /// Decodes one server notification, appending updates to `out`.
    pub fn notification(
        &mut self,
        method: &str,
        params: &Value,
        out: &mut Vec<SessionUpdate>,
    ) -> Option<AppSignal> {
        let before = out.len();
        let signal = match self.dispatch(method, params, out) {
            Ok(signal) => signal,
            Err(error) => {
                tracing::warn!(method, %error, "ignoring a codex notification with unexpected fields");
                self.count("malformed", method);
                None
            }
        };
        if out.len() > before
            && !matches!(
                out.last(),
                Some(SessionUpdate::AgentMessageChunk(_) | SessionUpdate::AgentThoughtChunk(_))
            )
        {
            self.streams.other_sent();
        }
        signal
    }

    /// Ends every tool call still open with `status` (cancel, crash), with `reason` added to
    /// what it shows; shows a held-back error first.
    pub fn close_open_tool_calls_because(
        &mut self,
        status: ToolCallStatus,
        reason: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) {
        self.flush_pending_error(out);
        self.plans_ended(out);
        self.compaction_ended(CompactionStatus::Cancelled, reason, out);
        for mut open in self.open.drain(..) {
            let mut content = open.shown();
            let id = open.call.tool_call_id;
            if let Some(reason) = reason {
                content.push(reason.into());
            }
            let fields = ToolCallUpdateFields::new().status(status).content(content);
            match open.output.as_mut().and_then(LiveOutput::terminal) {
                Some(terminal) => {
                    out.push(SessionUpdate::ToolCallUpdate(
                        terminal.finish(&id, None, None, fields),
                    ));
                }
                None => emit::tool_finished(out, id, fields),
            }
        }
        self.streams.other_sent();
    }

    /// How often each unknown notification method (`method:<name>`), item type (`item:<type>`)
    /// and malformed notification (`malformed:<method>`) was seen.
    pub fn unknown_counts(&self) -> BTreeMap<String, u64> {
        self.unknown.clone()
    }

    /// The tool call shown for Codex's item `item_id`, while it is open.
    pub(super) fn open_call(&self, item_id: &str) -> Option<&OpenCall> {
        self.open.iter().find(|c| c.item_id == item_id)
    }

    /// The most recent open MCP call of `server`'s `tool`.
    pub(super) fn open_mcp_call(&self, server: &str, tool: &str) -> Option<&OpenCall> {
        self.open
            .iter()
            .rev()
            .find(|c| c.mcp.as_ref().is_some_and(|(s, t)| s == server && t == tool))
    }

    /// The rendering options.
    pub(super) fn options(&self) -> &DecoderOptions {
        &self.opts
    }

    /// The id of the tool call or message for Codex's item `item_id`.
    pub(super) fn id(&self, item_id: &str) -> String {
        format!("{}{item_id}", self.opts.id_prefix)
    }

    fn dispatch(
        &mut self,
        method: &str,
        params: &Value,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<Option<AppSignal>, serde_json::Error> {
        if !matches!(method, methods::TURN_COMPLETED | methods::ERROR) && !methods::IGNORED.contains(&method)
        {
            self.flush_pending_error(out);
        }
        match method {
            methods::AGENT_MESSAGE_DELTA => {
                let d: wire::Delta = read(params)?;
                self.streams
                    .delta(Kind::Message, &self.id(&d.item_id), &d.delta, out);
            }
            methods::PLAN_DELTA => {
                let d: wire::Delta = read(params)?;
                self.plan_delta(&d.item_id, &d.delta, out);
            }
            methods::REASONING_SUMMARY_DELTA => {
                let d: wire::Delta = read(params)?;
                self.streams
                    .delta(Kind::Thought, &self.id(&d.item_id), &d.delta, out);
            }
            methods::REASONING_SUMMARY_PART_ADDED => {
                let p: wire::PartAdded = read(params)?;
                self.streams
                    .part_added(&self.id(&p.item_id), p.summary_index, out);
            }
            methods::COMMAND_OUTPUT_DELTA => self.output_delta(&read(params)?, out),
            methods::ITEM_STARTED => self.item_started(item(params), out)?,
            methods::ITEM_COMPLETED => self.item_completed(item(params), out)?,
            methods::PATCH_UPDATED => self.patch_updated(&read(params)?, out),
            methods::MCP_TOOL_PROGRESS => self.mcp_progress(&read(params)?, out),
            methods::TURN_PLAN_UPDATED => self.plan(read::<wire::PlanUpdated>(params)?.plan, out),
            methods::TOKEN_USAGE_UPDATED => return Ok(Some(Self::usage(&read(params)?, out))),
            methods::TURN_STARTED => {
                let turn = read::<wire::TurnEnvelope>(params)?.turn;
                return Ok(Some(AppSignal::TurnStarted { turn_id: turn.id }));
            }
            methods::TURN_COMPLETED => return Ok(Some(self.turn_completed(read(params)?, out))),
            methods::THREAD_NAME_UPDATED => {
                let name = read::<wire::NameUpdated>(params)?.thread_name;
                return Ok(name.filter(|n| !n.trim().is_empty()).map(AppSignal::ThreadName));
            }
            methods::ERROR => self.error(read(params)?, out),
            methods::WARNING | methods::GUARDIAN_WARNING => {
                self.warning(&read::<wire::Warning>(params)?.message, out);
            }
            methods::MODEL_REROUTED => {
                let r: wire::Rerouted = read(params)?;
                let text = format!("Codex switched from model {} to {}.", r.from_model, r.to_model);
                self.warning(&text, out);
            }
            methods::MCP_STARTUP_STATUS => {
                let s: wire::McpStartup = read(params)?;
                if s.status == "failed" {
                    let why = s.error.unwrap_or_default();
                    self.warning(&format!("MCP server `{}` failed to start: {why}", s.name), out);
                }
            }
            m if methods::IGNORED.contains(&m) => {}
            other => self.count("method", other),
        }
        Ok(None)
    }

    /// Sends the plan unless it is the one shown last.
    fn plan(&mut self, steps: Vec<wire::PlanStep>, out: &mut Vec<SessionUpdate>) {
        if self.last_plan.as_ref() == Some(&steps) {
            return;
        }
        let entries = steps
            .iter()
            .map(|s| {
                let status = match s.status.as_str() {
                    "completed" => PlanEntryStatus::Completed,
                    "inProgress" => PlanEntryStatus::InProgress,
                    _ => PlanEntryStatus::Pending,
                };
                (s.step.clone(), status)
            })
            .collect();
        emit::plan_steps(out, entries);
        self.last_plan = Some(steps);
    }

    /// The context in use (the last request's tokens) of the model's window, and the totals.
    fn usage(usage: &wire::TokenUsageUpdated, out: &mut Vec<SessionUpdate>) -> AppSignal {
        let usage = &usage.token_usage;
        if let Some(size) = usage.model_context_window.filter(|s| *s > 0) {
            emit::usage(out, usage.last.total_tokens, size);
        }
        let total = &usage.total;
        AppSignal::Totals(Totals {
            input_tokens: total.input_tokens,
            cached_input_tokens: total.cached_input_tokens,
            cache_write_input_tokens: total.cache_write_input_tokens,
            output_tokens: total.output_tokens,
            reasoning_output_tokens: total.reasoning_output_tokens,
        })
    }

    fn turn_completed(&mut self, envelope: wire::TurnEnvelope, out: &mut Vec<SessionUpdate>) -> AppSignal {
        self.plans_ended(out);
        let turn = envelope.turn;
        let end = match (turn.status.as_str(), turn.error) {
            ("completed", _) => TurnEnd::Completed,
            ("interrupted", _) => TurnEnd::Interrupted,
            (status, error) => {
                let error = error.unwrap_or_else(|| wire::TurnError {
                    message: format!("Codex ended the turn with status `{status}`."),
                    codex_error_info: None,
                    additional_details: None,
                });
                if self.pending_error.as_deref() == Some(error.message.as_str()) {
                    // `turn/completed` repeats the `error` just before it: show it only once.
                    self.pending_error = None;
                }
                if error.codex_error_info.is_some() {
                    self.failure_kind = failure::kind(error.codex_error_info.as_ref());
                }
                super::signal::failure(error)
            }
        };
        match &end {
            TurnEnd::Interrupted => self.compaction_ended(CompactionStatus::Cancelled, None, out),
            TurnEnd::Failed { message, .. } => {
                self.compaction_ended(CompactionStatus::Failed, Some(message.as_str()), out);
            }
            TurnEnd::Completed => self.compaction_ended(
                CompactionStatus::Failed,
                Some("The turn ended before the compaction finished."),
                out,
            ),
        }
        let reason = match end {
            TurnEnd::Interrupted => "Cancelled before it finished.",
            TurnEnd::Failed { .. } => "The turn failed before this finished.",
            TurnEnd::Completed => "The turn ended before this finished.",
        };
        // Commands that run on in Codex stay open, as background terminals; a cancel's
        // sweep stops them, so an interrupted turn closes them too.
        let background = if matches!(end, TurnEnd::Interrupted) {
            Vec::new()
        } else {
            self.take_background()
        };
        self.close_open_tool_calls_because(ToolCallStatus::Failed, Some(reason), out);
        self.keep_background(background, out);
        AppSignal::TurnCompleted {
            turn_id: turn.id,
            end,
        }
    }

    fn error(&mut self, notice: wire::ErrorNotice, out: &mut Vec<SessionUpdate>) {
        let kind = failure::kind(notice.error.codex_error_info.as_ref());
        if notice.will_retry && self.opts.air_declares(AIR_SESSION_FAILURE) {
            // A typed warning instead of text, each retry a revision of the turn's incident.
            let incident = self.incident(notice.turn_id.as_deref());
            incident.revision += 1;
            let update = failure::update(incident, kind, Severity::Warning, &notice.error.message);
            out.push(update);
        } else if notice.will_retry {
            self.warning(&notice.error.message, out);
        } else {
            self.failure_kind = kind;
            self.flush_pending_error(out);
            self.pending_error = Some(notice.error.message);
        }
    }

    /// The turn's failure incident (`<turn id>:error`, as the TS peer names it), begun now if
    /// there is none yet.
    fn incident(&mut self, turn_id: Option<&str>) -> &mut Incident {
        let prefix = &self.opts.id_prefix;
        self.incident.get_or_insert_with(|| Incident {
            id: turn_id.map_or_else(|| format!("{prefix}error"), |t| format!("{t}:error")),
            revision: 0,
        })
    }

    /// What kind of failure ended the turn, and the incident a client was told of in it (a
    /// failed turn's is begun here if it was not), for the turn's error (ADR 0054).
    pub fn failure(&mut self, turn_id: Option<&str>) -> (FailureKind, Incident) {
        (self.failure_kind, self.incident(turn_id).clone())
    }

    /// A non-fatal problem: a notice when the client shows them, else a labelled thought.
    fn warning(&mut self, message: &str, out: &mut Vec<SessionUpdate>) {
        if let Some(text) = self.warnings.show(message, self.opts.notices, out) {
            self.warning_thoughts += 1;
            let id = format!("{}warning_{}", self.opts.id_prefix, self.warning_thoughts);
            self.streams.completed(Kind::Thought, &id, &text, out);
        }
    }

    fn flush_pending_error(&mut self, out: &mut Vec<SessionUpdate>) {
        if let Some(message) = self.pending_error.take() {
            self.warning(&message, out);
        }
    }

    fn count(&mut self, what: &str, name: &str) {
        let count = self.unknown.entry(format!("{what}:{name}")).or_insert(0);
        if *count == 0 {
            tracing::warn!(kind = what, name, "ignoring unknown or malformed codex {what}");
        }
        *count += 1;
    }
}

#[cfg(test)]
mod tests;
