//! Codex's subagents as `codex exec --json` shows them: only the calls of the parent's
//! collaboration tools (`collab_tool_call`: spawn, wait, …), never what a subagent does, which
//! exec does not print. Each call is a tool call titled by the task it sends; the first one of
//! a turn brings a notice that the app-server transport shows the subagents' own work (ADR 0034).

use agent_client_protocol::v1::schema::{
    ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdateFields, ToolKind,
};
use serde_json::json;

use crate::items::{CollabToolCall, ItemStatus};
use crate::render::one_line;

/// What the user is told once per turn when Codex runs subagents on exec.
pub(super) const NOTICE: &str = "Codex is running subagents. On the exec transport acplb sees only the calls that \
start and wait for them, not their work; the app-server transport (the default) shows each subagent's messages \
and commands.";

/// The longest task shown in a title, in characters.
const TITLE_CHARS: usize = 80;

/// A collaboration call seen starting (or finished before it was seen).
pub(super) fn call(id: ToolCallId, item: &CollabToolCall) -> ToolCall {
    ToolCall::new(id, title(item))
        .kind(ToolKind::Think)
        .status(ToolCallStatus::InProgress)
        .raw_input(json!({ "tool": item.tool, "prompt": item.prompt, "receiverThreadIds": item.receiver_thread_ids }))
}

/// A finished collaboration call.
pub(super) fn finish(item: &CollabToolCall) -> ToolCallUpdateFields {
    let failed = matches!(item.status, ItemStatus::Failed | ItemStatus::Declined);
    ToolCallUpdateFields::new()
        .status(crate::render::emit::ended(failed))
        .title(title(item))
        .raw_output(json!({ "receiverThreadIds": item.receiver_thread_ids }))
}

fn title(item: &CollabToolCall) -> String {
    let task = item.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty());
    let tool = item.tool.as_str();
    match task {
        Some(task) => format!("Subagent: {}", one_line(task, TITLE_CHARS)),
        None if tool.starts_with("wait") => "Waiting for subagents".to_owned(),
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
        assert_eq!(
            title(&item("spawn_agent", Some(&"x".repeat(200))))
                .chars()
                .count(),
            10 + TITLE_CHARS
        );
    }
}
