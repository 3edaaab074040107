//! Serde mirror of the `codex app-server` messages the decoder reads (Codex 0.169.0, protocol v2,
//! camelCase), borrowed from the caller's `serde_json::Value`.
//!
//! Only the fields the decoder uses are declared; unknown fields are ignored, a missing or
//! `null` field reads as its default, and a field of the wrong type fails the whole message
//! (the decoder counts it as malformed and goes on).

use std::collections::BTreeMap;

use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

/// `null` (or a missing field, with `#[serde(default)]`) as the type's default.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `value[key]` when it is a non-empty string.
pub(super) fn text<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Reads `T` out of `value` without cloning it.
pub(super) fn read<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}

/// `item/agentMessage/delta`, `item/commandExecution/outputDelta`,
/// `item/reasoning/summaryTextDelta`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Delta {
    pub(super) item_id: String,
    pub(super) delta: String,
}

/// `item/reasoning/summaryPartAdded`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PartAdded {
    pub(super) item_id: String,
    #[serde(default)]
    pub(super) summary_index: u64,
}

/// `item/mcpToolCall/progress`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Progress {
    pub(super) item_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) message: String,
}

/// `item/fileChange/patchUpdated`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PatchUpdated {
    pub(super) item_id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) changes: Vec<FileUpdateChange>,
}

/// `turn/started` and `turn/completed`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct TurnEnvelope {
    pub(super) turn: Turn,
}

#[derive(Debug, serde::Deserialize)]
pub(super) struct Turn {
    pub(super) id: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default)]
    pub(super) error: Option<TurnError>,
}

/// A turn's error, also the payload of the `error` notification.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TurnError {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) message: String,
    /// `"unauthorized"`, `{"httpConnectionFailed": {"httpStatusCode": 401}}`, …
    #[serde(default)]
    pub(super) codex_error_info: Option<Value>,
    #[serde(default)]
    pub(super) additional_details: Option<String>,
}

/// `error`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ErrorNotice {
    pub(super) error: TurnError,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) will_retry: bool,
    /// The turn it is about.
    #[serde(default)]
    pub(super) turn_id: Option<String>,
}

/// `warning`, `guardianWarning`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct Warning {
    pub(super) message: String,
}

/// `model/rerouted`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Rerouted {
    pub(super) from_model: String,
    pub(super) to_model: String,
}

/// `mcpServer/startupStatus/updated`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct McpStartup {
    pub(super) name: String,
    pub(super) status: String,
    #[serde(default)]
    pub(super) error: Option<String>,
}

/// `turn/plan/updated`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct PlanUpdated {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) plan: Vec<PlanStep>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(super) struct PlanStep {
    pub(super) step: String,
    /// `pending`, `inProgress` or `completed`.
    pub(super) status: String,
}

/// `thread/tokenUsage/updated`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TokenUsageUpdated {
    pub(super) token_usage: TokenUsage,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TokenUsage {
    pub(super) total: Breakdown,
    pub(super) last: Breakdown,
    #[serde(default)]
    pub(super) model_context_window: Option<u64>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[expect(clippy::struct_field_names, reason = "the names are Codex's")]
pub(super) struct Breakdown {
    pub(super) total_tokens: u64,
    pub(super) input_tokens: u64,
    pub(super) cached_input_tokens: u64,
    pub(super) cache_write_input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) reasoning_output_tokens: u64,
}

/// `thread/name/updated`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NameUpdated {
    #[serde(default)]
    pub(super) thread_name: Option<String>,
}

/// The fields every item has: `type` picks the struct the rest is read into.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ItemHead {
    #[serde(rename = "type")]
    pub(super) kind: String,
    pub(super) id: String,
}

/// `agentMessage` (`text`), `plan` (`text`), `exitedReviewMode` (`review`).
#[derive(Debug, serde::Deserialize)]
pub(super) struct TextItem {
    #[serde(default, deserialize_with = "nullable", alias = "review")]
    pub(super) text: String,
}

/// `reasoning`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ReasoningItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) summary: Vec<String>,
}

/// `commandExecution` (also read from a command approval request, which has the same fields).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CommandItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) command: String,
    #[serde(default)]
    pub(super) cwd: Option<String>,
    /// What started it (`unifiedExecStartup`, `agent`, …): which tool of the model, if any.
    #[serde(default)]
    pub(super) source: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) command_actions: Vec<CommandAction>,
    #[serde(default)]
    pub(super) aggregated_output: Option<String>,
    #[serde(default)]
    pub(super) exit_code: Option<i64>,
    /// Codex's id of the process a unified exec command runs in (what the model polls): a
    /// command still open when its turn ends runs on in the background under it.
    #[serde(default)]
    pub(super) process_id: Option<String>,
}

/// Codex's own reading of a command (one per part of a pipeline or list).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(super) enum CommandAction {
    Read {
        #[serde(default, deserialize_with = "nullable")]
        path: String,
    },
    ListFiles,
    Search,
    #[serde(other)]
    Unknown,
}

/// `fileChange`.
#[derive(Debug, Clone, serde::Deserialize)]
pub(super) struct FileChangeItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) changes: Vec<FileUpdateChange>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub(super) struct FileUpdateChange {
    pub(super) path: String,
    pub(super) kind: PatchKind,
    /// For `add` the new content, for `delete` the old one, for `update` a unified diff of
    /// hunks (no `---`/`+++` header).
    #[serde(default, deserialize_with = "nullable")]
    pub(super) diff: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub(super) enum PatchKind {
    Add,
    Delete,
    Update {
        #[serde(default)]
        move_path: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

/// `mcpToolCall`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) server: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) tool: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default)]
    pub(super) arguments: Value,
    #[serde(default)]
    pub(super) result: Option<McpResult>,
    #[serde(default)]
    pub(super) error: Option<Warning>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpResult {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) content: Vec<Value>,
    #[serde(default)]
    pub(super) structured_content: Option<Value>,
}

/// `webSearch`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct WebSearchItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) query: String,
    #[serde(default)]
    pub(super) action: Option<Value>,
}

/// `collabAgentToolCall`: this agent acting on other agents (subagents).
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CollabItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) tool: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) receiver_thread_ids: Vec<String>,
    #[serde(default)]
    pub(super) prompt: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) agents_states: BTreeMap<String, AgentState>,
}

#[derive(Debug, serde::Deserialize)]
pub(super) struct AgentState {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default)]
    pub(super) message: Option<String>,
}

/// `subAgentActivity`.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct SubAgentItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) kind: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) agent_path: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) agent_thread_id: String,
}

/// `dynamicToolCall`: a tool the client registered with Codex.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DynamicToolItem {
    #[serde(default)]
    pub(super) namespace: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) tool: String,
    #[serde(default)]
    pub(super) arguments: Value,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) status: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) content_items: Vec<Value>,
    #[serde(default)]
    pub(super) success: Option<bool>,
}

/// `imageView`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ImageViewItem {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) path: String,
}
