//! Commands that outlive their turn: a unified exec command still open when its turn ends
//! runs on in a process of Codex's (a background terminal; `exec_command` handed the model its
//! process id). Its tool call stays open, says so, and goes on taking the command's output
//! and its end, which Codex sends later (between turns, or in a later turn, with the turn id
//! of the turn that started it). The session keeps the turn's decoder for that
//! (`session/background.rs`).

use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::{AppDecoder, OpenCall};
use crate::appserver::protocol::methods;
use crate::render::air;

/// `{"jetbrains": {"air": {"asyncTasks": {"backgrounded": true}}}}`, exactly as the TS peer
/// writes it (without the extension's `version`).
fn backgrounded() -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        acplb_core::capabilities::JETBRAINS.to_owned(),
        json!({ acplb_core::capabilities::AIR: { air::ASYNC_TASKS: { "backgrounded": true } } }),
    );
    meta
}

impl AppDecoder {
    /// Takes the open commands that run in a process of Codex's: they go on after the turn.
    pub(super) fn take_background(&mut self) -> Vec<OpenCall> {
        let (kept, rest) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|c| c.process.is_some());
        self.open = rest;
        kept
    }

    /// Keeps `calls` open, each showing that it runs in the background and how to stop it;
    /// for a `JetBrains` AIR client that declared `asyncTasks`, marked as the TS peer marks a
    /// backgrounded command: `_meta.jetbrains.air.asyncTasks.backgrounded` (ADR 0049).
    pub(super) fn keep_background(&mut self, calls: Vec<OpenCall>, out: &mut Vec<SessionUpdate>) {
        let marked = self.opts.air_declares(air::ASYNC_TASKS);
        for open in calls {
            let process = open.process.as_deref().unwrap_or_default();
            let mut content = open.shown();
            content.push(
                format!(
                    "Runs in the background as process {process}: `/terminals` lists it, `/terminals stop {process}` stops it."
                )
                .into(),
            );
            let fields = ToolCallUpdateFields::new().content(content);
            let update = ToolCallUpdate::new(open.call.tool_call_id.clone(), fields);
            out.push(SessionUpdate::ToolCallUpdate(
                update.meta(marked.then(backgrounded)),
            ));
            self.open.push(open);
        }
    }

    /// Whether a command of this decoder's turn still runs in the background.
    pub fn following(&self) -> bool {
        !self.open.is_empty()
    }

    /// Whether a notification is a piece of output or the end of one of the commands this
    /// decoder follows.
    pub fn follows(&self, method: &str, params: &Value) -> bool {
        let item = match method {
            methods::COMMAND_OUTPUT_DELTA => params.get("itemId"),
            methods::ITEM_COMPLETED => params.pointer("/item/id"),
            _ => None,
        };
        item.and_then(Value::as_str)
            .is_some_and(|id| self.open_call(id).is_some())
    }

    /// Ends the commands it still follows as `status`, with `why` (the session closes, or
    /// acplb follows too many).
    pub fn stop_following(&mut self, status: ToolCallStatus, why: &str, out: &mut Vec<SessionUpdate>) {
        self.close_open_tool_calls_because(status, Some(why), out);
    }
}
