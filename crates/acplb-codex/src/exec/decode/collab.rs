//! Codex's subagents as `codex exec --json` shows them: only the calls of the parent's
//! collaboration tools (`collab_tool_call`: spawn, wait, …), never what a subagent does, which
//! exec does not print. Each call is a tool call titled by the task it sends; the first one of
//! a turn brings a notice that the app-server transport shows the subagents' own work (ADR 0034).

use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdateFields, ToolKind,
};
use serde_json::json;

use super::Decoder;
use crate::items::{CollabToolCall, ItemStatus};
use crate::render::emit::{self, LastSent};
use crate::render::{names, one_line};

/// What the user is told once per turn when Codex runs subagents on exec.
const NOTICE: &str = "Codex is running subagents. On the exec transport acplb sees only the calls that \
start and wait for them, not their work; the app-server transport (the default) shows each subagent's messages \
and commands.";

/// The longest task shown in a title, in characters.
const TITLE_CHARS: usize = 80;

/// A collaboration call seen starting (or finished before it was seen).
fn call(id: ToolCallId, item: &CollabToolCall) -> ToolCall {
    ToolCall::new(id, title(item))
        .name(names::collab(&item.tool))
        .kind(ToolKind::Think)
        .status(ToolCallStatus::InProgress)
        .raw_input(json!({ "tool": item.tool, "prompt": item.prompt, "receiverThreadIds": item.receiver_thread_ids }))
}

/// A finished collaboration call.
fn finish(item: &CollabToolCall) -> ToolCallUpdateFields {
    let failed = matches!(item.status, ItemStatus::Failed | ItemStatus::Declined);
    ToolCallUpdateFields::new()
        .status(crate::render::emit::ended(failed))
        .title(title(item))
        .raw_output(json!({ "receiverThreadIds": item.receiver_thread_ids }))
}

impl Decoder {
    /// A collaboration call, after the notice that exec does not show subagents' work (once).
    pub(super) fn collab_call(
        &mut self,
        id: ToolCallId,
        item: &CollabToolCall,
        out: &mut Vec<SessionUpdate>,
    ) -> ToolCall {
        if !self.collab_noticed {
            self.collab_noticed = true;
            if self.opts.notices {
                emit::info_notice(out, NOTICE.to_owned());
            } else {
                let text = self.separated(LastSent::Thought, NOTICE.to_owned(), out);
                emit::thought(
                    out,
                    text,
                    format!("{}subagents_{}", self.opts.id_prefix, self.line_no),
                );
            }
        }
        call(id, item)
    }

    /// A collaboration call finished (`open_id` when it was seen starting).
    pub(super) fn collab_finished(
        &mut self,
        open_id: Option<ToolCallId>,
        message_id: String,
        item: &CollabToolCall,
        out: &mut Vec<SessionUpdate>,
    ) {
        if let Some(id) = open_id {
            emit::tool_finished(out, id, finish(item));
        } else {
            let mut call = self.collab_call(message_id.into(), item, out);
            call.update(finish(item));
            emit::tool_started(out, call);
        }
    }
}

fn title(item: &CollabToolCall) -> String {
    let task = item.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let tool = item.tool.as_str();
    match task {
        Some(task) => format!("Subagent: {}", one_line(task, TITLE_CHARS)),
        None if tool.starts_with("wait") => "Waiting for subagents".to_owned(),
        None if tool.starts_with("spawn") => "Subagent".to_owned(),
        None if tool.is_empty() => "Subagents".to_owned(),
        None => format!("Subagents: {}", one_line(tool, TITLE_CHARS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(tool: &str, prompt: Option<&str>) -> CollabToolCall {
        CollabToolCall {
            tool: tool.into(),
            prompt: prompt.map(Into::into),
            ..CollabToolCall::default()
        }
    }

    #[test]
    fn titles_name_the_task_or_the_tool() {
        assert_eq!(
            title(&item("spawn_agent", Some("List\nfiles"))),
            "Subagent: List files"
        );
        assert_eq!(title(&item("wait", None)), "Waiting for subagents");
        assert_eq!(title(&item("close_agent", Some(" "))), "Subagents: close_agent");
        assert_eq!(title(&item("", None)), "Subagents");
        assert_eq!(title(&item("spawn_agent", None)), "Subagent");
        assert_eq!(
            title(&item("spawn_agent", Some(&"x".repeat(200))))
                .chars()
                .count(),
            10 + TITLE_CHARS
        );
    }
}
