//! Items: tool items start and finish tool calls, and stream into them while they run; text
//! items complete their streams.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCall, ToolCallId, ToolCallUpdateFields};
use serde_json::Value;

use super::{AppDecoder, OpenCall};
use crate::appserver::text::Kind;
use crate::appserver::tools::Tool;
use crate::appserver::wire::{self, ItemHead, read};
use crate::render::emit;
use crate::render::live::{self, LiveOutput};

impl AppDecoder {
    pub(super) fn item_started(
        &mut self,
        item: &Value,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<(), serde_json::Error> {
        let head: ItemHead = read(item)?;
        let Some(tool) = Tool::read(&head.kind, item) else {
            match head.kind.as_str() {
                // Text is streamed by deltas and completed at `item/completed`.
                "agentMessage" => self.message_phase(&head.id, item),
                "reasoning" | "plan" | "userMessage" | "hookPrompt" | "enteredReviewMode"
                | "exitedReviewMode" => {}
                "contextCompaction" => self.compaction_started(self.id(&head.id), out),
                other => self.count("item", other),
            }
            return Ok(());
        };
        let tool = tool?;
        if self.open_call(&head.id).is_some() {
            return Ok(());
        }
        let mut call = tool.call(ToolCallId::new(self.id(&head.id)), &self.opts);
        let mut output = None;
        let mut process = None;
        if let Tool::Command(command) = &tool {
            call = self.command_opened(call, command.cwd.clone());
            output = Some(LiveOutput::new(&call.tool_call_id, &self.opts));
            process.clone_from(&command.process_id);
        }
        self.open.push(OpenCall {
            item_id: head.id,
            call: call.clone(),
            output,
            mcp: tool.mcp_key(),
            process,
            task: None,
        });
        emit::tool_started(out, call);
        Ok(())
    }

    pub(super) fn item_completed(
        &mut self,
        item: &Value,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<(), serde_json::Error> {
        let head: ItemHead = read(item)?;
        let id = self.id(&head.id);
        match head.kind.as_str() {
            "plan" if self.opts.plan_updates => {
                let text = read::<wire::TextItem>(item)?.text;
                self.plan_completed(&head.id, &text, out);
                return Ok(());
            }
            "agentMessage" | "plan" | "exitedReviewMode" => {
                if head.kind == "agentMessage" {
                    self.message_phase(&head.id, item);
                }
                let text = read::<wire::TextItem>(item)?.text;
                self.streams.completed(Kind::Message, &id, &text, out);
                if head.kind == "plan" {
                    // A plan mode turn's proposed plan: its steps as the session's plan.
                    emit::plan_steps(out, crate::appserver::plan::entries(&text));
                }
                return Ok(());
            }
            "reasoning" => {
                let text = read::<wire::ReasoningItem>(item)?.summary.join("\n\n");
                self.streams.completed(Kind::Thought, &id, &text, out);
                return Ok(());
            }
            "contextCompaction" => {
                self.compaction_completed(&id, out);
                return Ok(());
            }
            "userMessage" | "hookPrompt" | "enteredReviewMode" => return Ok(()),
            _ => {}
        }
        let Some(tool) = Tool::read(&head.kind, item) else {
            self.count("item", &head.kind);
            return Ok(());
        };
        let tool = tool?;
        let open = self
            .open
            .iter()
            .position(|c| c.item_id == head.id)
            .map(|i| self.open.remove(i));
        let task = open
            .as_ref()
            .and_then(|o| o.task.map(|t| (o.call.tool_call_id.clone(), t)));
        let from = out.len();
        self.tool_completed(tool, open, id, out);
        if let Some((call, task)) = task {
            Self::task_ended(&call, task, out, from);
        }
        Ok(())
    }

    /// A tool item's end: its call finished (opened first if it never was).
    fn tool_completed(
        &mut self,
        mut tool: Tool,
        open: Option<OpenCall>,
        id: String,
        out: &mut Vec<SessionUpdate>,
    ) {
        if self.opts.terminal
            && let Tool::Command(command) = &mut tool
        {
            let (whole, exit_code) = (command.aggregated_output.take(), command.exit_code);
            let cwd = command.cwd.clone();
            let (call_id, output) = if let Some(open) = open {
                (open.call.tool_call_id, open.output)
            } else {
                let call = self.command_opened(tool.call(ToolCallId::new(id), &self.opts), cwd);
                let call_id = call.tool_call_id.clone();
                emit::tool_started(out, call);
                (call_id, None)
            };
            let mut output = output.unwrap_or_else(|| LiveOutput::new(&call_id, &self.opts));
            // Status, raw output and notes; the output itself goes to the terminal.
            let fields = tool.finish(None, &self.opts);
            if let Some(terminal) = output.terminal() {
                let update = terminal.finish(&call_id, whole.as_deref(), exit_code, fields);
                out.push(SessionUpdate::ToolCallUpdate(update));
            }
            return;
        }
        if let Some(open) = open.as_ref() {
            let output = open.output.as_ref().and_then(LiveOutput::text);
            let fields = tool.finish(output, &self.opts);
            emit::tool_finished(out, open.call.tool_call_id.clone(), fields);
        } else {
            let mut call = tool.call(ToolCallId::new(id), &self.opts);
            call.update(tool.finish(None, &self.opts));
            emit::tool_started(out, call);
        }
    }

    /// For an AIR client, the chunks of agent message `item_id` carry its `phase`
    /// (`commentary`, `final_answer`, ...) in `_meta.jetbrains.air.phase`, as the TS peer sends
    /// them; a message without one carries nothing.
    fn message_phase(&mut self, item_id: &str, item: &Value) {
        if self.opts.air.is_none() {
            return;
        }
        if let Some(phase) = item
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            let meta = acplb_core::capabilities::air_meta("phase", phase.into());
            self.streams.meta(&self.id(item_id), meta);
        }
    }

    /// A command's call as it starts: a terminal where the client shows them, in the
    /// command's own directory.
    fn command_opened(&self, call: ToolCall, cwd: Option<String>) -> ToolCall {
        if !self.opts.terminal {
            return call;
        }
        let cwd = cwd.map_or(self.opts.cwd.clone(), Into::into);
        live::open_terminal(call, &cwd)
    }

    pub(super) fn output_delta(&mut self, delta: &wire::Delta, out: &mut Vec<SessionUpdate>) {
        let Some(open) = self.open.iter_mut().find(|c| c.item_id == delta.item_id) else {
            tracing::debug!(item = delta.item_id, "output of a command not started; ignored");
            return;
        };
        let id = &open.call.tool_call_id;
        let output = open.output.get_or_insert_with(|| LiveOutput::new(id, &self.opts));
        output.push(id, &delta.delta, out);
    }

    pub(super) fn patch_updated(&mut self, patch: &wire::PatchUpdated, out: &mut Vec<SessionUpdate>) {
        let Some(open) = self.open.iter_mut().find(|c| c.item_id == patch.item_id) else {
            return;
        };
        let fields =
            ToolCallUpdateFields::new().content(crate::appserver::edits::diffs(&patch.changes, &self.opts));
        open.call.update(fields.clone());
        emit::tool_progress(out, open.call.tool_call_id.clone(), fields);
    }

    pub(super) fn mcp_progress(&mut self, progress: &wire::Progress, out: &mut Vec<SessionUpdate>) {
        let Some(open) = self.open.iter_mut().find(|c| c.item_id == progress.item_id) else {
            return;
        };
        if progress.message.is_empty() {
            return;
        }
        let fields = ToolCallUpdateFields::new().content(vec![progress.message.clone().into()]);
        open.call.update(fields.clone());
        emit::tool_progress(out, open.call.tool_call_id.clone(), fields);
    }
}

/// `params.item` (null when missing, which then fails to read as an item).
pub(super) fn item(params: &Value) -> &Value {
    params.get("item").unwrap_or(&Value::Null)
}
