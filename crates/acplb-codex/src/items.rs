//! Codex's item vocabulary (Codex CLI 0.169.0): the items a turn makes (messages, reasoning,
//! commands, file changes, MCP calls, web searches, plans, errors) as `codex exec --json` prints
//! them, and the [`Event`] envelope that carries them on that transport. The renderers both
//! decoders draw (`render/`) take these types; the app-server decoder converts its own items to
//! them where a renderer exists.
//!
//! Each exec stdout line is one [`Event`]. Unknown event and item types become `Unknown` variants that
//! keep the type name, so a newer Codex never breaks a session.
//!
//! [`Event`] and [`Item`] deserialize through small hand-written map visitors (`items/de.rs`)
//! instead of `#[serde(tag = "type")]`, for two reasons:
//! - `web_search` items carry the `id` key twice (`"id":"item_0",…,"id":"ws_…"`); a derived
//!   struct rejects that as a duplicate field. Here the first `id` is the item id and the second
//!   is kept as the provider's id.
//! - an internally tagged enum buffers the whole object before choosing a variant; with
//!   multi-megabyte command output on one line, a single pass is noticeably faster.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of `codex exec --json` output.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// `thread.started`: always first; the id to resume the thread with.
    ThreadStarted {
        /// The thread id (a `UUIDv7`).
        thread_id: String,
    },
    /// `turn.started`.
    TurnStarted,
    /// `item.started`.
    ItemStarted(Item),
    /// `item.updated` (seen for `todo_list`).
    ItemUpdated(Item),
    /// `item.completed`.
    ItemCompleted(Item),
    /// `turn.completed`, with token usage cumulative for the whole thread.
    TurnCompleted {
        /// Cumulative usage.
        usage: Usage,
    },
    /// `turn.failed`.
    TurnFailed {
        /// Why.
        message: String,
    },
    /// `error`: fatal when a `turn.failed` follows, otherwise a transient warning (retries).
    Error {
        /// The message.
        message: String,
    },
    /// Any other event type.
    Unknown {
        /// The `type` value.
        event_type: String,
    },
}

/// Token usage as `turn.completed` reports it (cumulative for the thread).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Cached input tokens.
    pub cached_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning output tokens.
    pub reasoning_output_tokens: u64,
}

/// A thread item: an id (`item_N`, numbered per process) and its typed payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The item id (the first `id` key of the object).
    pub id: String,
    /// The payload.
    pub kind: ItemKind,
}

/// The payload of an item, by its `type`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ItemKind {
    /// `agent_message`.
    AgentMessage(TextItem),
    /// `reasoning` (the reasoning summary).
    Reasoning(TextItem),
    /// `command_execution`.
    CommandExecution(CommandExecution),
    /// `file_change`.
    FileChange(FileChange),
    /// `mcp_tool_call`.
    McpToolCall(McpToolCall),
    /// `web_search`.
    WebSearch(WebSearch),
    /// `todo_list`.
    TodoList(TodoList),
    /// `error`: a non-fatal error surfaced as an item.
    Error(ErrorItem),
    /// `collab_tool_call`: a call of Codex's multi-agent tools (spawn, wait, …).
    CollabToolCall(CollabToolCall),
    /// Any other item type.
    Unknown {
        /// The `type` value.
        item_type: String,
    },
}

/// Status of an item with a lifecycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemStatus {
    /// Running.
    #[default]
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with an error (non-zero exit, failed patch, failed MCP call).
    Failed,
    /// Refused by the reviewer or the user.
    Declined,
    /// A status this mirror does not know.
    Unknown,
}

impl ItemStatus {
    /// Reads the wire spelling; anything unknown is [`ItemStatus::Unknown`].
    pub fn from_wire(status: &str) -> Self {
        match status {
            "in_progress" => Self::InProgress,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "declined" => Self::Declined,
            _ => Self::Unknown,
        }
    }

    /// The wire spelling (`in_progress`, `completed`, …; `unknown` for unknown values).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Declined => "declined",
            Self::Unknown => "unknown",
        }
    }
}

/// `collab_tool_call` payload: what exec shows of Codex's subagents (not their own work).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollabToolCall {
    /// The tool (`spawn_agent`, `wait`, …).
    pub tool: String,
    /// The task sent, when there is one.
    pub prompt: Option<String>,
    /// The threads of the agents it addressed.
    pub receiver_thread_ids: Vec<String>,
    /// Status.
    pub status: ItemStatus,
}

/// `agent_message` and `reasoning` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextItem {
    /// The text (Markdown).
    pub text: String,
}

/// `command_execution` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandExecution {
    /// The command as spawned, e.g. `/bin/bash -lc 'ls -la'`.
    pub command: String,
    /// Stdout and stderr together.
    pub aggregated_output: String,
    /// Exit code, `None` while running or when the command never ran.
    pub exit_code: Option<i64>,
    /// Status.
    pub status: ItemStatus,
}

/// `file_change` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileChange {
    /// The files changed.
    pub changes: Vec<PathChange>,
    /// Status.
    pub status: ItemStatus,
}

/// One file of a `file_change`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PathChange {
    /// Absolute path.
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

/// What a `file_change` did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Created.
    Add,
    /// Modified.
    Update,
    /// Removed.
    Delete,
    /// A kind this mirror does not know.
    #[serde(other)]
    Unknown,
}

/// `mcp_tool_call` payload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpToolCall {
    /// MCP server name.
    pub server: String,
    /// Tool name.
    pub tool: String,
    /// Tool arguments (JSON).
    pub arguments: Value,
    /// The result: `{content: [MCP content blocks], structured_content}`.
    pub result: Option<McpResult>,
    /// The error, when the call failed before returning a result.
    pub error: Option<ErrorItem>,
    /// Status.
    pub status: ItemStatus,
}

/// An MCP tool result.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct McpResult {
    /// MCP content blocks (`{type: "text", text}`, `{type: "image", data, mimeType}`, …).
    pub content: Vec<Value>,
    /// Structured content, when the tool returned any.
    pub structured_content: Option<Value>,
}

/// `web_search` payload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WebSearch {
    /// The query (may be empty before the search ran).
    pub query: String,
    /// The action (`{"type":"search","query":…}`, `open_page`, `find_in_page`, …).
    pub action: Option<Value>,
    /// The provider's id of the search (the second `id` key, `ws_…`).
    pub provider_id: Option<String>,
}

/// `todo_list` payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TodoList {
    /// The entries, in order.
    pub items: Vec<TodoEntry>,
}

/// One `todo_list` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct TodoEntry {
    /// What to do.
    pub text: String,
    /// Whether it is done (`in_progress` vs `pending` is not reported).
    pub completed: bool,
}

/// An error message (`error` items, MCP call errors).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ErrorItem {
    /// The message.
    pub message: String,
}

mod de;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Event {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn web_search_with_duplicate_id() {
        let line = r#"{"type":"item.started","item":{"id":"item_0","type":"web_search","id":"ws_0180","query":"rust serde","action":{"type":"search","query":"rust serde"}}}"#;
        let Event::ItemStarted(item) = parse(line) else {
            panic!()
        };
        assert_eq!(item.id, "item_0");
        let ItemKind::WebSearch(search) = item.kind else {
            panic!()
        };
        assert_eq!(search.query, "rust serde");
        assert_eq!(search.provider_id.as_deref(), Some("ws_0180"));
    }

    #[test]
    fn unknown_types_keep_their_name() {
        assert_eq!(
            parse(r#"{"type":"item.plan.delta","item_id":"item_3","delta":"x"}"#),
            Event::Unknown {
                event_type: "item.plan.delta".into()
            }
        );
        let Event::ItemCompleted(item) =
            parse(r#"{"type":"item.completed","item":{"id":"item_1","type":"hologram","tool":"wait"}}"#)
        else {
            panic!()
        };
        assert_eq!(
            item.kind,
            ItemKind::Unknown {
                item_type: "hologram".into()
            }
        );
    }

    #[test]
    fn type_may_come_last_and_unknown_status_is_tolerated() {
        let Event::ItemCompleted(item) = parse(
            r#"{"item":{"status":"paused","command":"ls","aggregated_output":"","exit_code":null,"id":"item_2","type":"command_execution"},"type":"item.completed"}"#,
        ) else {
            panic!()
        };
        let ItemKind::CommandExecution(command) = item.kind else {
            panic!()
        };
        assert_eq!(command.status, ItemStatus::Unknown);
    }

    #[test]
    fn turn_events() {
        assert_eq!(
            parse(r#"{"type":"turn.failed","error":{"message":"boom"}}"#),
            Event::TurnFailed {
                message: "boom".into()
            }
        );
        let Event::TurnCompleted { usage } = parse(
            r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":48,"reasoning_output_tokens":16}}"#,
        ) else {
            panic!()
        };
        assert_eq!(usage.input_tokens, 1200);
        assert_eq!(usage.reasoning_output_tokens, 16);
    }

    #[test]
    fn nulls_and_odd_types_read_as_absent() {
        let Event::ItemStarted(item) = parse(
            r#"{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":7,"tool":"echo","arguments":{"a":1},"result":null,"error":null,"status":"in_progress"}}"#,
        ) else {
            panic!()
        };
        let ItemKind::McpToolCall(call) = item.kind else {
            panic!()
        };
        assert_eq!((call.server.as_str(), call.tool.as_str()), ("", "echo"));
        assert_eq!((call.result, call.error), (None, None));
        let Event::ItemStarted(item) =
            parse(r#"{"type":"item.started","item":{"id":"item_1","type":"file_change","changes":null}}"#)
        else {
            panic!()
        };
        assert_eq!(item.kind, ItemKind::FileChange(FileChange::default()));
    }

    #[test]
    fn missing_type_is_an_error() {
        assert!(serde_json::from_str::<Event>(r#"{"thread_id":"x"}"#).is_err());
        assert!(serde_json::from_str::<Event>("[1]").is_err());
    }
}
