//! Tool items (commands, edits, MCP calls, web searches, subagents, client tools, image views)
//! as ACP tool calls: their shape when they start and the fields that finish them.
//!
//! Commands, MCP calls and web searches go through the shared renderers (`render/`, converted to
//! Codex's item types in `items.rs`), so both transports show the editor the same titles, kinds
//! and content.

use agent_client_protocol::v1::schema::{
    ContentBlock, ImageContent, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use super::edits;
use super::wire::{
    CollabItem, CommandAction, CommandItem, DynamicToolItem, FileChangeItem, ImageViewItem, McpItem,
    SubAgentItem, WebSearchItem, read,
};
use crate::command::{self, CommandClass, FileRef};
use crate::items::{self, ErrorItem, ItemStatus, McpResult, McpToolCall, WebSearch};
use crate::output::{StreamedOutput, bounded_string, fenced_bounded};
use crate::render::DecoderOptions;
use crate::render::edits::display_path;
use crate::render::emit::ended;
use crate::render::names;
use crate::render::tools::{command_finish, mcp_call, mcp_finish, short_title, web_call, web_finish};

/// A tool item of any kind Codex reports.
#[derive(Debug)]
pub(super) enum Tool {
    Command(CommandItem),
    Edit(FileChangeItem),
    Mcp(McpItem),
    Web(WebSearchItem),
    Collab(CollabItem),
    SubAgent(SubAgentItem),
    Dynamic(DynamicToolItem),
    ImageView(ImageViewItem),
}

impl Tool {
    /// The item as a tool, `None` when `kind` is not a tool item type.
    pub(super) fn read(kind: &str, item: &Value) -> Option<Result<Tool, serde_json::Error>> {
        Some(match kind {
            "commandExecution" => read(item).map(Tool::Command),
            "fileChange" => read(item).map(Tool::Edit),
            "mcpToolCall" => read(item).map(Tool::Mcp),
            "webSearch" => read(item).map(Tool::Web),
            "collabAgentToolCall" => read(item).map(Tool::Collab),
            "subAgentActivity" => read(item).map(Tool::SubAgent),
            "dynamicToolCall" => read(item).map(Tool::Dynamic),
            "imageView" => read(item).map(Tool::ImageView),
            _ => return None,
        })
    }

    /// The tool call as it starts.
    pub(super) fn call(&self, id: ToolCallId, opts: &DecoderOptions) -> ToolCall {
        match self {
            Tool::Command(c) => command_call(id, c, opts),
            Tool::Edit(f) => edits::edit_call(id, f, opts),
            Tool::Mcp(m) => mcp_call(id, &exec_mcp(m)),
            Tool::Web(w) => web_call(id, &exec_web(w)),
            Tool::Collab(c) => collab_call(id, c, opts),
            Tool::SubAgent(s) => ToolCall::new(id, subagent_title(s))
                .name(names::SUBAGENT_ACTIVITY.to_owned())
                .kind(ToolKind::Other)
                .status(ToolCallStatus::InProgress)
                .raw_input(json!({ "agent_thread_id": s.agent_thread_id, "agent_path": s.agent_path })),
            Tool::Dynamic(d) => ToolCall::new(id, dynamic_title(d))
                .name(names::dynamic(d.namespace.as_deref(), &d.tool))
                .kind(ToolKind::Other)
                .status(ToolCallStatus::InProgress)
                .raw_input(d.arguments.clone()),
            Tool::ImageView(i) => {
                ToolCall::new(id, format!("View image {}", display_path(&i.path, &opts.cwd)))
                    .name(names::VIEW_IMAGE.to_owned())
                    .kind(ToolKind::Read)
                    .status(ToolCallStatus::InProgress)
                    .locations(vec![ToolCallLocation::new(&i.path)])
            }
        }
    }

    /// The fields that finish the call; `output` is what a command streamed, used when the
    /// completed item carries no output.
    pub(super) fn finish(
        self,
        output: Option<&StreamedOutput>,
        opts: &DecoderOptions,
    ) -> ToolCallUpdateFields {
        match self {
            Tool::Command(c) => finish_command(c, output, opts),
            Tool::Edit(f) => edits::edit_finish(&f, opts),
            Tool::Mcp(m) => mcp_finish(&exec_mcp(&m), opts),
            Tool::Web(w) => web_finish(&exec_web(&w)),
            Tool::Collab(c) => collab_finish(&c, opts),
            Tool::SubAgent(s) => ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .title(subagent_title(&s)),
            Tool::Dynamic(d) => dynamic_finish(&d, opts),
            Tool::ImageView(_) => ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
        }
    }

    /// Server and tool of an MCP call, to tie Codex's approval question to it.
    pub(super) fn mcp_key(&self) -> Option<(String, String)> {
        match self {
            Tool::Mcp(m) => Some((m.server.clone(), m.tool.clone())),
            _ => None,
        }
    }
}

/// An app-server status (camelCase) as the exec wire's.
pub(super) fn item_status(status: &str) -> ItemStatus {
    match status {
        "inProgress" => ItemStatus::InProgress,
        "completed" => ItemStatus::Completed,
        "failed" | "interrupted" | "errored" => ItemStatus::Failed,
        "declined" => ItemStatus::Declined,
        _ => ItemStatus::Unknown,
    }
}

/// A running command: titled by its script like exec's, kind and files from Codex's own
/// `commandActions` (from the script itself when Codex gave none).
pub(super) fn command_call(id: ToolCallId, item: &CommandItem, opts: &DecoderOptions) -> ToolCall {
    let script = command::unwrap_shell(&item.command);
    let cwd = item.cwd.as_deref().map_or(opts.cwd.clone(), Into::into);
    let (kind, files) = match classify(&item.command_actions, &script, &cwd) {
        CommandClass::Read(files) => (ToolKind::Read, files),
        CommandClass::Search => (ToolKind::Search, Vec::new()),
        CommandClass::Execute => (ToolKind::Execute, Vec::new()),
    };
    ToolCall::new(id, short_title(&script))
        .name(names::command(item.source.as_deref()).to_owned())
        .kind(kind)
        .status(ToolCallStatus::InProgress)
        .locations(
            files
                .into_iter()
                .map(|f| ToolCallLocation::new(f.path).line(f.line))
                .collect(),
        )
        .raw_input(json!({ "command": item.command }))
}

/// What the command does by Codex's actions: all reads → Read (lines from acplb's own reading
/// when it finds the same files), any list or search → Search, anything else → Execute.
fn classify(actions: &[CommandAction], script: &str, cwd: &std::path::Path) -> CommandClass {
    if actions.is_empty() {
        return command::classify(script, cwd);
    }
    let mut files = Vec::new();
    let mut searched = false;
    for action in actions {
        match action {
            CommandAction::Read { path } if !path.is_empty() => files.push(FileRef {
                path: command::resolve(cwd, path),
                line: None,
            }),
            CommandAction::ListFiles | CommandAction::Search => searched = true,
            CommandAction::Read { .. } | CommandAction::Unknown => return CommandClass::Execute,
        }
    }
    if searched {
        return CommandClass::Search;
    }
    files.dedup();
    match command::classify(script, cwd) {
        CommandClass::Read(ours) if ours.iter().map(|f| &f.path).eq(files.iter().map(|f| &f.path)) => {
            CommandClass::Read(ours)
        }
        _ => CommandClass::Read(files),
    }
}

fn finish_command(
    item: CommandItem,
    output: Option<&StreamedOutput>,
    opts: &DecoderOptions,
) -> ToolCallUpdateFields {
    let streamed_only = item.aggregated_output.is_none();
    let mut exec = items::CommandExecution {
        command: item.command,
        aggregated_output: item.aggregated_output.unwrap_or_default(),
        exit_code: item.exit_code,
        status: item_status(&item.status),
    };
    let mut fields = command_finish(&mut exec, opts);
    if let (true, Some(output)) = (streamed_only, output.filter(|o| !o.is_empty())) {
        fields
            .content
            .get_or_insert_with(Vec::new)
            .push(output.fenced().into());
    }
    fields
}

fn exec_mcp(item: &McpItem) -> McpToolCall {
    McpToolCall {
        server: item.server.clone(),
        tool: item.tool.clone(),
        arguments: item.arguments.clone(),
        result: item.result.as_ref().map(|r| McpResult {
            content: r.content.clone(),
            structured_content: r.structured_content.clone(),
        }),
        error: item.error.as_ref().map(|e| ErrorItem {
            message: e.message.clone(),
        }),
        status: item_status(&item.status),
    }
}

fn exec_web(item: &WebSearchItem) -> WebSearch {
    WebSearch {
        query: item.query.clone(),
        action: item.action.clone(),
        provider_id: None,
    }
}

/// This agent acting on subagents: "Spawn agent", "Wait for agent 1a2b3c4d", ….
/// A collaboration call: its task as text content, unless the client renders `rawInput`
/// (AIR's `rawInputRendering`, ADR 0049), which holds it.
fn collab_call(id: ToolCallId, item: &CollabItem, opts: &DecoderOptions) -> ToolCall {
    let shown = !opts.air_declares(crate::render::air::RAW_INPUT_RENDERING);
    let content: Vec<ToolCallContent> = item
        .prompt
        .iter()
        .filter(|p| shown && !p.is_empty())
        .map(|p| p.clone().into())
        .collect();
    ToolCall::new(id, collab_title(item))
        .name(names::collab(&item.tool))
        .kind(ToolKind::Other)
        .status(ToolCallStatus::InProgress)
        .content(content)
        .raw_input(json!({
            "tool": item.tool,
            "receiver_thread_ids": item.receiver_thread_ids,
            "prompt": item.prompt,
            "model": item.model,
        }))
}

fn collab_finish(item: &CollabItem, opts: &DecoderOptions) -> ToolCallUpdateFields {
    let call_status = match item_status(&item.status) {
        ItemStatus::Failed | ItemStatus::Declined => ToolCallStatus::Failed,
        _ => ToolCallStatus::Completed,
    };
    let agents: Vec<ToolCallContent> = item
        .agents_states
        .iter()
        .map(|(thread, state)| {
            let mut line = format!("Agent {}: {}", short_id(thread), state.status);
            if let Some(message) = state.message.as_deref().filter(|m| !m.is_empty()) {
                line.push_str(" — ");
                line.push_str(message);
            }
            bounded_string(line, opts.max_output_bytes).into()
        })
        .collect();
    let mut fields = ToolCallUpdateFields::new()
        .status(call_status)
        .title(collab_title(item));
    if !agents.is_empty() {
        fields = fields.content(agents);
    }
    fields
}

fn collab_title(item: &CollabItem) -> String {
    let agents: Vec<String> = item.receiver_thread_ids.iter().map(|t| short_id(t)).collect();
    let verb = match item.tool.as_str() {
        "spawnAgent" => "Spawn agent",
        "sendInput" | "sendMessage" => "Message agent",
        "resumeAgent" => "Resume agent",
        "wait" => "Wait for agent",
        "closeAgent" => "Close agent",
        "followupTask" => "Follow-up task for agent",
        "interruptAgent" => "Interrupt agent",
        "listAgents" => return "List agents".to_owned(),
        other => return format!("Agent tool {other}"),
    };
    match (agents.is_empty(), &item.model) {
        (false, _) => format!("{verb} {}", agents.join(", ")),
        (true, Some(model)) => format!("{verb} ({model})"),
        (true, None) => verb.to_owned(),
    }
}

/// The last 8 characters of a thread id (`UUIDv7` ids share their leading, time-based part).
fn short_id(thread: &str) -> String {
    let skip = thread.chars().count().saturating_sub(8);
    thread.chars().skip(skip).collect()
}

fn subagent_title(item: &SubAgentItem) -> String {
    let name = if item.agent_path.is_empty() {
        short_id(&item.agent_thread_id)
    } else {
        item.agent_path.clone()
    };
    format!("Subagent {name}: {}", item.kind)
}

fn dynamic_title(item: &DynamicToolItem) -> String {
    match item.namespace.as_deref().filter(|n| !n.is_empty()) {
        Some(namespace) => format!("{namespace}.{}", item.tool),
        None => item.tool.clone(),
    }
}

fn dynamic_finish(item: &DynamicToolItem, opts: &DecoderOptions) -> ToolCallUpdateFields {
    let failed = item.success == Some(false) || item_status(&item.status) == ItemStatus::Failed;
    let content: Vec<ToolCallContent> = item
        .content_items
        .iter()
        .map(|block| {
            let field = |name: &str| block.get(name).and_then(Value::as_str);
            match (field("type"), field("text"), field("imageUrl")) {
                (Some("inputText"), Some(text), _) => {
                    bounded_string(text.to_owned(), opts.max_output_bytes).into()
                }
                (Some("inputImage"), _, Some(url)) => match data_url(url) {
                    Some((mime, data)) => ContentBlock::Image(ImageContent::new(data, mime)).into(),
                    None => format!("Image: {url}").into(),
                },
                _ => fenced_bounded(&block.to_string(), opts.max_output_bytes).into(),
            }
        })
        .collect();
    ToolCallUpdateFields::new()
        .status(ended(failed))
        .content(content)
        .raw_output(json!({ "status": item_status(&item.status).as_str(), "success": item.success }))
}

/// `data:<mime>;base64,<data>` as its parts.
fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime, data))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn actions(value: Value) -> Vec<CommandAction> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn kinds_from_codex_actions() {
        let cwd = Path::new("/w");
        let read = actions(json!([{"type": "read", "command": "cat a", "name": "a", "path": "a"}]));
        assert_eq!(
            classify(&read, "cat a", cwd),
            CommandClass::Read(vec![FileRef {
                path: "/w/a".into(),
                line: None
            }])
        );
        // acplb's own reading adds the line when it sees the same file.
        let sed = actions(json!([{"type": "read", "command": "sed", "name": "a", "path": "a"}]));
        assert_eq!(
            classify(&sed, "sed -n '10,20p' a", cwd),
            CommandClass::Read(vec![FileRef {
                path: "/w/a".into(),
                line: Some(10)
            }])
        );
        let list = actions(json!([{"type": "listFiles", "command": "ls", "path": null}]));
        assert_eq!(classify(&list, "ls", cwd), CommandClass::Search);
        let mixed = actions(json!([{"type": "read", "path": "a"}, {"type": "unknown", "command": "rm a"}]));
        assert_eq!(classify(&mixed, "cat a; rm a", cwd), CommandClass::Execute);
        let future = actions(json!([{"type": "somethingNew", "command": "x"}]));
        assert_eq!(classify(&future, "x", cwd), CommandClass::Execute);
        // No actions: acplb reads the script itself.
        assert_eq!(classify(&[], "ls -la", cwd), CommandClass::Search);
    }

    #[test]
    fn collab_titles() {
        let item = |tool: &str, ids: &[&str], model: Option<&str>| CollabItem {
            tool: tool.into(),
            status: "inProgress".into(),
            receiver_thread_ids: ids.iter().map(|s| (*s).to_owned()).collect(),
            prompt: None,
            model: model.map(Into::into),
            agents_states: std::collections::BTreeMap::default(),
        };
        assert_eq!(
            collab_title(&item("spawnAgent", &[], Some("gpt-5.5"))),
            "Spawn agent (gpt-5.5)"
        );
        assert_eq!(
            collab_title(&item("wait", &["01a2-aaaa-bbbb-1234abcd"], None)),
            "Wait for agent 1234abcd"
        );
        assert_eq!(collab_title(&item("listAgents", &[], None)), "List agents");
        assert_eq!(collab_title(&item("teleport", &[], None)), "Agent tool teleport");
    }

    #[test]
    fn data_urls() {
        assert_eq!(data_url("data:image/png;base64,AAA"), Some(("image/png", "AAA")));
        assert_eq!(data_url("https://x/y.png"), None);
    }
}
