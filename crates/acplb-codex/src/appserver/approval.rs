//! Codex's approval requests (server → client) as ACP permission prompts, and the JSON-RPC
//! `result` that carries each answer back.
//!
//! - `item/commandExecution/requestApproval`: the options Codex lists in `availableDecisions`
//!   (allow once, for the session, always with an execpolicy or network amendment echoed
//!   back), plus "Allow for this session" and "Reject" (`acceptForSession`, `decline`), which
//!   Codex accepts and honours although it does not list them for a plain escalation.
//! - `item/fileChange/requestApproval`: allow once, for the session, reject; the tool call
//!   shows the diff of the `fileChange` item started just before.
//! - `mcpServer/elicitation/request` whose `_meta.codex_approval_kind` is `mcp_tool_call`: allow
//!   once, for the session or always (as `_meta.persist` offers; the answer's
//!   `_meta.persist` says which), reject. Other elicitations ask for form input: not ours.
//! - `item/permissions/requestApproval`: grant the requested permissions for the turn or the
//!   session, or grant none.
//!
//! The tool call in a prompt has the id of the live tool call of the same item, so the editor
//! ties them together. Requests are read leniently: a missing or odd field never loses the
//! prompt (the user can still reject it).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, ToolCall, ToolCallContent, ToolCallId, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::{Map, Value, json};

use super::decode::AppDecoder;
use super::protocol::methods;
use super::tools::command_call;
pub use super::user_input::answer_user_input;
use crate::render::names;

mod mcp;
mod permissions;
use super::wire::{CommandItem, read, text};

/// What to ask the editor for one server→client request, and how each answer goes back.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The tool call shown with the question (same id as the live tool call).
    pub tool_call: ToolCallUpdate,
    /// The choices, allowing ones first.
    pub options: Vec<PermissionOption>,
    answers: Vec<Answer>,
    rejected: Value,
    cancelled: Value,
}

/// The `result` an option sends back.
#[derive(Debug, Clone)]
struct Answer {
    option_id: String,
    result: Value,
    for_session: bool,
}

impl Ask {
    /// `None` for a request method that is not an approval (the caller handles those).
    ///
    /// `decoder` supplies what `item/started` already showed (the command, the diff).
    pub fn from_request(method: &str, params: &Value, decoder: &AppDecoder) -> Option<Ask> {
        match method {
            methods::COMMAND_APPROVAL => Some(command(params, decoder)),
            methods::FILE_CHANGE_APPROVAL => Some(file_change(params, decoder)),
            methods::MCP_ELICITATION => mcp::mcp_tool(params, decoder),
            methods::PERMISSIONS_APPROVAL => Some(permissions::permissions(params, decoder)),
            _ => None,
        }
    }

    /// The JSON-RPC `result` for the option the user picked (an unknown option rejects).
    pub fn answer(&self, option_id: &str) -> Value {
        self.answers
            .iter()
            .find(|a| a.option_id == option_id)
            .map_or_else(|| self.rejected.clone(), |a| a.result.clone())
    }

    /// The `result` when the user rejected without picking, the client erred or went away.
    pub fn rejected(&self) -> Value {
        self.rejected.clone()
    }

    /// The `result` when the turn is being cancelled (Codex then stops the turn, where it
    /// offers that; otherwise the same as [`Ask::rejected`]).
    pub fn cancelled(&self) -> Value {
        self.cancelled.clone()
    }

    /// The `result` for the editor's `answer`: the option picked, "cancel" for a cancelled
    /// question, else (an error, a client that left) a rejection.
    pub fn result(&self, answer: &acplb_core::provider::PermissionAnswer) -> Value {
        use acplb_core::provider::PermissionAnswer;
        match answer {
            PermissionAnswer::Selected(option) => self.answer(option),
            PermissionAnswer::Cancelled => self.cancelled(),
            PermissionAnswer::Unanswered(why) => {
                tracing::info!(reason = %why, "permission not answered; treated as a rejection");
                self.rejected()
            }
        }
    }

    /// Whether the option allows this for the rest of the session.
    pub fn is_for_session(&self, option_id: &str) -> bool {
        self.answers
            .iter()
            .any(|a| a.option_id == option_id && a.for_session)
    }
}

/// `_meta.jetbrains.air.permission {version: 1, title, description?}` of a request, as the TS
/// peer gives an AIR client (ADR 0049): its title by the request (a command, network access,
/// edits, more permissions), Codex's `reason` as the description; `None` for other requests
/// (an MCP tool's approval has none in the peer either).
pub fn air_permission(method: &str, params: &Value) -> Option<Map<String, Value>> {
    let title = match method {
        methods::COMMAND_APPROVAL if params.get("networkApprovalContext").is_some_and(|n| !n.is_null()) => {
            "Allow network access?"
        }
        methods::COMMAND_APPROVAL => "Run command?",
        methods::FILE_CHANGE_APPROVAL => "Make edits?",
        methods::PERMISSIONS_APPROVAL => "Grant permissions?",
        _ => return None,
    };
    let mut permission = json!({ "version": 1, "title": title });
    if let Some(reason) = params
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        permission["description"] = reason.into();
    }
    Some(acplb_core::capabilities::air_meta("permission", permission))
}

/// Collects options and their answers, keeping option ids unique.
#[derive(Debug, Default)]
struct Choices {
    options: Vec<PermissionOption>,
    answers: Vec<Answer>,
}

impl Choices {
    fn add(&mut self, id: &str, name: String, kind: PermissionOptionKind, result: Value, for_session: bool) {
        let mut option_id = id.to_owned();
        let mut n = 1;
        while self.answers.iter().any(|a| a.option_id == option_id) {
            n += 1;
            option_id = format!("{id}-{n}");
        }
        self.options
            .push(PermissionOption::new(option_id.clone(), name, kind));
        self.answers.push(Answer {
            option_id,
            result,
            for_session,
        });
    }

    fn has(&self, id: &str) -> bool {
        self.answers.iter().any(|a| a.option_id == id)
    }

    fn ask(self, tool_call: ToolCallUpdate, rejected: Value, cancelled: Value) -> Ask {
        Ask {
            tool_call,
            options: self.options,
            answers: self.answers,
            rejected,
            cancelled,
        }
    }
}

/// What the live tool call shows, as update fields (no status: the call keeps its own).
fn shown(call: &ToolCall) -> ToolCallUpdateFields {
    let mut fields = ToolCallUpdateFields::new()
        .title(call.title.clone())
        .kind(call.kind)
        .name(call.name.clone());
    // A terminal is not shown in the question: the client may show the question apart from
    // the call, where the terminal's id means nothing (ADR 0033).
    let content: Vec<ToolCallContent> = call
        .content
        .iter()
        .filter(|c| !matches!(c, ToolCallContent::Terminal(_)))
        .cloned()
        .collect();
    if !content.is_empty() {
        fields = fields.content(content);
    }
    if !call.locations.is_empty() {
        fields = fields.locations(call.locations.clone());
    }
    fields.raw_input.clone_from(&call.raw_input);
    fields
}

/// `fields` with `lines` shown before its content.
fn with_lines(mut fields: ToolCallUpdateFields, lines: Vec<String>) -> ToolCallUpdateFields {
    let mut content: Vec<ToolCallContent> = lines.into_iter().map(Into::into).collect();
    content.extend(fields.content.take().unwrap_or_default());
    if !content.is_empty() {
        fields = fields.content(content);
    }
    fields
}

fn command(params: &Value, decoder: &AppDecoder) -> Ask {
    let item_id = text(params, "itemId").unwrap_or_default();
    let id = ToolCallId::new(decoder.id(item_id));
    let fields = if let Some(open) = decoder.open_call(item_id) {
        shown(&open.call)
    } else {
        let item: CommandItem = read(params).unwrap_or_default();
        shown(&command_call(id.clone(), &item, decoder.options()))
    };
    let mut lines = Vec::new();
    if let Some(net) = params.get("networkApprovalContext").filter(|n| n.is_object()) {
        let host = text(net, "host").unwrap_or("an unknown host");
        lines.push(format!("Network access to {host}"));
    }
    if let Some(reason) = text(params, "reason") {
        lines.push(reason.to_owned());
    }
    let decisions = params
        .get("availableDecisions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| default_command_decisions(params));
    let mut choices = Choices::default();
    let mut cancel = false;
    for decision in &decisions {
        match decision {
            Value::String(word) => match word.as_str() {
                "accept" => {
                    choices.add(
                        "accept",
                        "Allow once".into(),
                        PermissionOptionKind::AllowOnce,
                        json!({"decision": "accept"}),
                        false,
                    );
                    for_session(&mut choices);
                }
                "acceptForSession" => for_session(&mut choices),
                "cancel" => cancel = true,
                // `decline` is added last, whether listed or not.
                "decline" => {}
                other => tracing::debug!(decision = other, "unknown command approval decision not offered"),
            },
            Value::Object(map) => amendment_option(&mut choices, map, decision),
            _ => {}
        }
    }
    choices.add(
        "decline",
        "Reject".into(),
        PermissionOptionKind::RejectOnce,
        json!({"decision": "decline"}),
        false,
    );
    let cancelled = if cancel {
        json!({"decision": "cancel"})
    } else {
        json!({"decision": "decline"})
    };
    let tool_call = ToolCallUpdate::new(id, with_lines(fields, lines));
    choices.ask(tool_call, json!({"decision": "decline"}), cancelled)
}

/// "Allow for this session", right after "Allow once" even where Codex does not list it:
/// Codex 0.169.0 lists it only for network approvals, but accepts and honours it for any
/// command (the fixture `command-approval-session`: the same command again runs unasked).
fn for_session(choices: &mut Choices) {
    if !choices.has("acceptForSession") {
        choices.add(
            "acceptForSession",
            "Allow for this session".into(),
            PermissionOptionKind::AllowAlways,
            json!({"decision": "acceptForSession"}),
            true,
        );
    }
}

/// An "always" option: the amendment Codex proposed, echoed back whole.
fn amendment_option(choices: &mut Choices, map: &Map<String, Value>, decision: &Value) {
    let result = json!({ "decision": decision });
    if let Some(prefix) = map
        .get("acceptWithExecpolicyAmendment")
        .and_then(|a| a.get("execpolicy_amendment"))
        .and_then(Value::as_array)
    {
        let words: Vec<&str> = prefix.iter().filter_map(Value::as_str).collect();
        let name = format!("Always allow commands starting with `{}`", words.join(" "));
        choices.add(
            "acceptWithExecpolicyAmendment",
            name,
            PermissionOptionKind::AllowAlways,
            result,
            false,
        );
    } else if let Some(amendment) = map
        .get("applyNetworkPolicyAmendment")
        .and_then(|a| a.get("network_policy_amendment"))
    {
        let host = text(amendment, "host").unwrap_or("this host");
        let (name, kind) = if text(amendment, "action") == Some("deny") {
            (
                format!("Always block network access to {host}"),
                PermissionOptionKind::RejectAlways,
            )
        } else {
            (
                format!("Always allow network access to {host}"),
                PermissionOptionKind::AllowAlways,
            )
        };
        choices.add("applyNetworkPolicyAmendment", name, kind, result, false);
    } else {
        tracing::debug!(%decision, "unknown command approval decision not offered");
    }
}

/// What Codex offers when the request lists no decisions (older servers): its own defaults.
fn default_command_decisions(params: &Value) -> Vec<Value> {
    let mut decisions = vec![json!("accept")];
    if params.get("networkApprovalContext").is_some_and(Value::is_object) {
        decisions.push(json!("acceptForSession"));
        let allow = params
            .get("proposedNetworkPolicyAmendments")
            .and_then(Value::as_array)
            .and_then(|all| all.iter().find(|a| text(a, "action") == Some("allow")));
        if let Some(amendment) = allow {
            decisions.push(json!({"applyNetworkPolicyAmendment": {"network_policy_amendment": amendment}}));
        }
    } else if let Some(prefix) = params.get("proposedExecpolicyAmendment").filter(|p| p.is_array()) {
        decisions.push(json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": prefix}}));
    }
    decisions.push(json!("cancel"));
    decisions
}

fn file_change(params: &Value, decoder: &AppDecoder) -> Ask {
    let item_id = text(params, "itemId").unwrap_or_default();
    let id = ToolCallId::new(decoder.id(item_id));
    let fields = match decoder.open_call(item_id) {
        Some(open) => shown(&open.call),
        None => ToolCallUpdateFields::new()
            .title("Edit files")
            .name(names::APPLY_PATCH.to_owned())
            .kind(ToolKind::Edit),
    };
    let mut lines = Vec::new();
    if let Some(reason) = text(params, "reason") {
        lines.push(reason.to_owned());
    }
    if let Some(root) = text(params, "grantRoot") {
        lines.push(format!(
            "Codex also asks to write under {root} for the rest of the session."
        ));
    }
    let mut choices = Choices::default();
    for (word, name, kind, for_session) in [
        ("accept", "Allow once", PermissionOptionKind::AllowOnce, false),
        (
            "acceptForSession",
            "Allow for this session",
            PermissionOptionKind::AllowAlways,
            true,
        ),
        ("decline", "Reject", PermissionOptionKind::RejectOnce, false),
    ] {
        choices.add(word, name.into(), kind, json!({"decision": word}), for_session);
    }
    let tool_call = ToolCallUpdate::new(id, with_lines(fields, lines));
    choices.ask(
        tool_call,
        json!({"decision": "decline"}),
        json!({"decision": "cancel"}),
    )
}

#[cfg(test)]
mod tests;
