//! Tool calls for commands, MCP calls and web searches: their shape when they start and the
//! fields that finish them.

use agent_client_protocol::v1::schema::{
    ContentBlock, ImageContent, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation, ToolCallStatus,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use super::DecoderOptions;
use super::emit::ended;
use super::names;
use crate::command::{self, CommandClass};
use crate::items::{CommandExecution, ItemStatus, McpToolCall, WebSearch};
use crate::output::{bounded_string, fenced_bounded, fenced_bounded_owned};

/// Longest command shown as a title; the full command stays in `raw_input`.
const MAX_TITLE_CHARS: usize = 200;

/// A running command: titled by its script, kind from what the script does.
pub(crate) fn command_call(id: ToolCallId, item: &CommandExecution, opts: &DecoderOptions) -> ToolCall {
    let script = command::unwrap_shell(&item.command);
    let (kind, locations) = match command::classify(&script, &opts.cwd) {
        CommandClass::Read(files) => (
            ToolKind::Read,
            files
                .into_iter()
                .map(|f| ToolCallLocation::new(f.path).line(f.line))
                .collect(),
        ),
        CommandClass::Search => (ToolKind::Search, Vec::new()),
        CommandClass::Execute => (ToolKind::Execute, Vec::new()),
    };
    ToolCall::new(id, short_title(&script))
        .name(names::EXEC_COMMAND.to_owned())
        .kind(kind)
        .status(ToolCallStatus::InProgress)
        .locations(locations)
        .raw_input(json!({ "command": item.command }))
}

/// A finished command: its (bounded, fenced) output, exit code and status.
///
/// The output is moved out of `item` (it is only shown once).
pub(crate) fn command_finish(item: &mut CommandExecution, opts: &DecoderOptions) -> ToolCallUpdateFields {
    let status = match item.status {
        ItemStatus::Completed => ToolCallStatus::Completed,
        ItemStatus::Failed | ItemStatus::Declined => ToolCallStatus::Failed,
        ItemStatus::InProgress | ItemStatus::Unknown => match item.exit_code {
            Some(0) | None => ToolCallStatus::Completed,
            Some(_) => ToolCallStatus::Failed,
        },
    };
    let mut content: Vec<ToolCallContent> = Vec::new();
    if item.status == ItemStatus::Declined {
        content.push("Command declined: it was not run.".into());
    }
    if !item.aggregated_output.is_empty() {
        let output = std::mem::take(&mut item.aggregated_output);
        content.push(fenced_bounded_owned(output, opts.max_output_bytes).into());
    }
    ToolCallUpdateFields::new()
        .status(status)
        .content(content)
        .raw_output(json!({ "exit_code": item.exit_code, "status": item.status.as_str() }))
}

/// The first line of a script, cut to [`MAX_TITLE_CHARS`], with `…` when anything was cut.
pub(crate) fn short_title(script: &str) -> String {
    let first_line = script.lines().next().unwrap_or_default();
    let mut title: String = first_line.chars().take(MAX_TITLE_CHARS).collect();
    if title.len() < script.trim_end().len() {
        title.push_str(" …");
    }
    title
}

/// A running MCP tool call, titled `server.tool`.
pub(crate) fn mcp_call(id: ToolCallId, item: &McpToolCall) -> ToolCall {
    ToolCall::new(id, format!("{}.{}", item.server, item.tool))
        .name(names::mcp(&item.server, &item.tool))
        .kind(ToolKind::Other)
        .status(ToolCallStatus::InProgress)
        .raw_input(item.arguments.clone())
}

/// A finished MCP call: its content blocks, or its error.
pub(crate) fn mcp_finish(item: &McpToolCall, opts: &DecoderOptions) -> ToolCallUpdateFields {
    let failed = item.status == ItemStatus::Failed || item.error.is_some();
    let mut content: Vec<ToolCallContent> = Vec::new();
    if let Some(result) = &item.result {
        content.extend(
            result
                .content
                .iter()
                .map(|block| mcp_block(block, opts.max_output_bytes)),
        );
        if let (true, Some(structured)) = (result.content.is_empty(), &result.structured_content) {
            content.push(json_text(structured, opts.max_output_bytes).into());
        }
    }
    if let Some(error) = &item.error {
        content.push(bounded_string(error.message.clone(), opts.max_output_bytes).into());
    }
    let structured = item.result.as_ref().and_then(|r| r.structured_content.clone());
    let error = item.error.as_ref().map(|e| e.message.clone());
    ToolCallUpdateFields::new()
        .status(ended(failed))
        .content(content)
        .raw_output(json!({
            "status": item.status.as_str(),
            "structured_content": structured,
            "error": error,
        }))
}

/// MCP text → text, MCP image → image, anything else → its JSON as text.
fn mcp_block(block: &Value, max_bytes: usize) -> ToolCallContent {
    let field = |name: &str| block.get(name).and_then(Value::as_str);
    match field("type") {
        Some("text") => bounded_string(field("text").unwrap_or_default().to_owned(), max_bytes).into(),
        Some("image") => match (field("data"), field("mimeType").or_else(|| field("mime_type"))) {
            (Some(data), Some(mime)) => ContentBlock::Image(ImageContent::new(data, mime)).into(),
            _ => json_text(block, max_bytes).into(),
        },
        _ => json_text(block, max_bytes).into(),
    }
}

fn json_text(value: &Value, max_bytes: usize) -> String {
    fenced_bounded(&value.to_string(), max_bytes)
}

/// A web search; the title says what is searched or opened.
pub(crate) fn web_call(id: ToolCallId, item: &WebSearch) -> ToolCall {
    ToolCall::new(id, web_title(item))
        .name(names::WEB_SEARCH.to_owned())
        .kind(ToolKind::Fetch)
        .status(ToolCallStatus::InProgress)
        .raw_input(json!({ "query": item.query, "action": item.action }))
}

/// A finished web search (exec reports no results, only that it ran).
pub(crate) fn web_finish(item: &WebSearch) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .status(ToolCallStatus::Completed)
        .title(web_title(item))
        .raw_output(json!({ "provider_id": item.provider_id, "action": item.action }))
}

fn web_title(item: &WebSearch) -> String {
    let action = item.action.as_ref();
    let field = |name: &str| {
        action
            .and_then(|a| a.get(name))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match field("type") {
        "open_page" if !field("url").is_empty() => format!("Open {}", field("url")),
        "find_in_page" if !field("pattern").is_empty() => {
            format!("Find \"{}\" in {}", field("pattern"), field("url"))
        }
        _ => {
            let query = if item.query.is_empty() {
                field("query")
            } else {
                item.query.as_str()
            };
            if query.is_empty() {
                "Search the web".to_owned()
            } else {
                format!("Search the web: {query}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles() {
        assert_eq!(short_title("ls -la"), "ls -la");
        assert_eq!(short_title("cat <<EOF\nx\nEOF"), "cat <<EOF …");
        assert_eq!(short_title(&"a".repeat(300)), format!("{} …", "a".repeat(200)));
        assert_eq!(short_title("ls\n"), "ls");
    }

    #[test]
    fn web_titles() {
        let search = |query: &str, action: Value| WebSearch {
            query: query.into(),
            action: Some(action),
            provider_id: None,
        };
        assert_eq!(
            web_title(&search("rust", json!({"type": "search"}))),
            "Search the web: rust"
        );
        assert_eq!(
            web_title(&search("", json!({"type": "search", "query": "q"}))),
            "Search the web: q"
        );
        assert_eq!(web_title(&search("", json!({"type": "other"}))), "Search the web");
        assert_eq!(
            web_title(&search("", json!({"type": "open_page", "url": "https://x.y"}))),
            "Open https://x.y"
        );
        assert_eq!(
            web_title(&search(
                "",
                json!({"type": "find_in_page", "url": "u", "pattern": "p"})
            )),
            "Find \"p\" in u"
        );
    }
}
