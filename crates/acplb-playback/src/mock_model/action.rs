//! The action vocabulary of a script: what the mock model can do within one step.

use serde::Deserialize;
use serde_json::{Value, json};

/// One thing the mock model does within a step. In a script: an inline table with a `type` key.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Action {
    /// A reasoning item (Codex shows it as a `reasoning` item) with one summary part, or more.
    Reasoning {
        /// The summary text (markdown): the first summary part.
        text: String,
        /// Further summary parts, each streamed after its own `reasoning_summary_part.added`.
        #[serde(default)]
        more_parts: Vec<String>,
    },
    /// An assistant message; `text` may use the placeholders listed in the README.
    Message {
        /// The message text, a template.
        text: String,
        /// `commentary` or `final_answer` (the default).
        #[serde(default)]
        phase: Phase,
    },
    /// A call of Codex's `exec_command` tool.
    Exec {
        /// The shell command line.
        cmd: String,
        /// E.g. `require_escalated` to ask for a command outside the sandbox.
        #[serde(default)]
        sandbox_permissions: Option<String>,
        /// The reason shown with an escalation request.
        #[serde(default)]
        justification: Option<String>,
        /// How long Codex waits for output before returning to the model (default 2000).
        #[serde(default = "default_yield_time_ms")]
        yield_time_ms: u64,
    },
    /// A call of Codex's freeform `apply_patch` tool.
    ApplyPatch {
        /// The patch text, `*** Begin Patch` … `*** End Patch`.
        patch: String,
    },
    /// A call of Codex's `update_plan` tool (offered only with `tools.update_plan.enabled=true`).
    UpdatePlan {
        /// Optional explanation shown with the plan.
        #[serde(default)]
        explanation: Option<String>,
        /// The whole plan, in order.
        plan: Vec<PlanItem>,
    },
    /// A client-executed `tool_search_call` (how Codex 0.169.0 reveals deferred MCP tools).
    ToolSearch {
        /// The search query.
        query: String,
        /// The maximum number of tools to return (default 4).
        #[serde(default = "default_search_limit")]
        limit: u32,
    },
    /// A call of an MCP tool: a function call named `tool` in namespace `mcp__<server>`.
    McpCall {
        /// The MCP server name as configured in Codex.
        server: String,
        /// The tool name.
        tool: String,
        /// The tool arguments (a table).
        #[serde(default = "empty_object")]
        arguments: Value,
    },
    /// Any function call.
    FunctionCall {
        /// The function name.
        name: String,
        /// An optional namespace (e.g. `mcp__server`).
        #[serde(default)]
        namespace: Option<String>,
        /// The arguments (a table), sent JSON-encoded.
        #[serde(default = "empty_object")]
        arguments: Value,
    },
    /// Any freeform (custom) tool call.
    CustomToolCall {
        /// The tool name.
        name: String,
        /// The raw tool input.
        input: String,
    },
    /// A provider-side `web_search_call` item.
    WebSearch {
        /// The search query.
        query: String,
    },
    /// The token usage reported in `response.completed` (the last one in a step wins).
    Usage(Usage),
    /// Answer with this HTTP status and a JSON error body instead of a stream (the only action of its step).
    HttpError {
        /// An HTTP status from 400 to 599.
        status: u16,
        /// The JSON body; default `{"error":{"message":"mock HTTP error <status>","type":"mock_error"}}`.
        #[serde(default)]
        body: Option<Value>,
    },
    /// End the stream with `response.failed` instead of `response.completed` (last action only).
    Failed {
        /// The error code, e.g. `server_error` or `context_length_exceeded`.
        code: String,
        /// The error message.
        message: String,
    },
    /// End the stream without `response.completed` (last action only), optionally in the middle of a message.
    Truncate {
        /// If set, a message item is opened and this text streamed as its only delta before the cut.
        #[serde(default)]
        partial_text: Option<String>,
    },
}

/// The phase of an assistant message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A progress note in the middle of a turn.
    Commentary,
    /// The answer that ends the turn.
    #[default]
    FinalAnswer,
}

impl Phase {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Commentary => "commentary",
            Phase::FinalAnswer => "final_answer",
        }
    }
}

/// One entry of an `update_plan` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanItem {
    /// The step text.
    pub step: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: PlanStatus,
}

/// The status of a plan entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

impl PlanStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanStatus::Pending => "pending",
            PlanStatus::InProgress => "in_progress",
            PlanStatus::Completed => "completed",
        }
    }
}

/// Token counts for `response.completed`; Codex sums them over a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Usage {
    /// Input tokens (default 1200).
    pub input_tokens: u64,
    /// Of which cached (default 200).
    pub cached_tokens: u64,
    /// Output tokens (default 48).
    pub output_tokens: u64,
    /// Of which reasoning (default 16).
    pub reasoning_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input_tokens: 1200,
            cached_tokens: 200,
            output_tokens: 48,
            reasoning_tokens: 16,
        }
    }
}

/// Whether an `--approve-for-me` reviewer request is allowed or denied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The reviewer allows the action.
    #[default]
    Allow,
    /// The reviewer denies the action.
    Deny,
}

fn default_yield_time_ms() -> u64 {
    2000
}

fn default_search_limit() -> u32 {
    4
}

fn empty_object() -> Value {
    json!({})
}
