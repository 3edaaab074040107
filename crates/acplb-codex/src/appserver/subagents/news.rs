//! What a subagent's own messages and its parent's collaboration items say of it: its turns,
//! its finished items, its errors, and the ends Codex reports for it.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use serde_json::Value;

use super::child::is_open;
use super::sessions::{self, Stop};
use super::{Subagents, lines};
use crate::appserver::protocol::methods;

impl Subagents {
    /// A notification of a child's own thread.
    pub(super) fn childs_message(
        &mut self,
        thread: &str,
        method: &str,
        params: &Value,
        out: &mut Vec<SessionUpdate>,
    ) {
        let air_parent = self.sessions_of.clone().filter(|_| self.waits);
        let Some(child) = self.child(thread, None, None, out) else {
            tracing::debug!(method, "a message of a subagent not shown; dropped");
            return;
        };
        if method == methods::TURN_STARTED {
            Self::renew(air_parent.as_deref(), child, out);
        }
        let mut own = Vec::new();
        let _signal = child.decoder.notification(method, params, &mut own);
        // A child shown as a session sees its decoder's updates: its messages, tool calls.
        if let Some(session) = &child.session {
            sessions::routed(session, own, out);
        }
        match method {
            methods::TURN_STARTED => {
                child.turn_id = params
                    .pointer("/turn/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                child.due = false;
                // A session's state says so at each turn's start; a call's status when it changes.
                if child.status != ToolCallStatus::InProgress || child.session.is_some() {
                    child.status = ToolCallStatus::InProgress;
                    child.stop = None;
                    child.show(out);
                }
            }
            methods::TURN_COMPLETED => {
                child.turn_id = None;
                let turn = params.get("turn").unwrap_or(&Value::Null);
                match turn.get("status").and_then(Value::as_str) {
                    Some("failed") => {
                        let why = turn.pointer("/error/message").and_then(Value::as_str);
                        let why = why.unwrap_or("the subagent's turn failed");
                        child.end(
                            ToolCallStatus::Failed,
                            Stop::Error(why.to_owned()),
                            format!("Failed: {why}"),
                        );
                    }
                    Some("interrupted") => {
                        child.end(ToolCallStatus::Failed, Stop::Cancelled, "Interrupted.".to_owned());
                    }
                    _ => {
                        child.status = ToolCallStatus::Completed;
                        child.stop = Some(Stop::EndTurn);
                    }
                }
                child.show(out);
            }
            methods::ITEM_COMPLETED => {
                let item = params.get("item").unwrap_or(&Value::Null);
                child.asked_ended(item, out);
                if child.session.is_some() {
                    // Its session shows the item itself.
                    if item.get("type").and_then(Value::as_str) == Some("agentMessage") {
                        child.result = item.get("text").and_then(Value::as_str).map(str::to_owned);
                    }
                    return;
                }
                if item.get("type").and_then(Value::as_str) == Some("agentMessage") {
                    child.result = item.get("text").and_then(Value::as_str).map(str::to_owned);
                }
                if let Some(line) = lines::line(item) {
                    child.push(line);
                    child.show(out);
                }
            }
            // A session's own decoder shows its errors.
            methods::ERROR
                if child.session.is_none()
                    && params.get("willRetry").and_then(Value::as_bool) != Some(true) =>
            {
                if let Some(message) = params.pointer("/error/message").and_then(Value::as_str) {
                    child.push(format!("Error: {}", lines::shorten(message, 240)));
                    child.show(out);
                }
            }
            _ => {}
        }
    }

    /// A parent's finished item about its children: their last known states (`agentsStates`
    /// of a collaboration call; a v2 activity's `interrupted`).
    pub(super) fn states(&mut self, params: &Value, out: &mut Vec<SessionUpdate>) {
        let item = params.get("item").unwrap_or(&Value::Null);
        if item.get("kind").and_then(Value::as_str) == Some("interrupted")
            && let Some(thread) = item.get("agentThreadId").and_then(Value::as_str)
            && let Some(child) = self.children.iter_mut().find(|c| c.thread_id == thread)
            && is_open(child.status)
        {
            child.end(ToolCallStatus::Failed, Stop::Cancelled, "Interrupted.".to_owned());
            child.show(out);
        }
        let Some(states) = item.get("agentsStates").and_then(Value::as_object) else {
            return;
        };
        for (thread, state) in states {
            let Some(child) = self.children.iter_mut().find(|c| &c.thread_id == thread) else {
                continue;
            };
            let message = state.get("message").and_then(Value::as_str);
            let (ended, stop) = match state.get("status").and_then(Value::as_str) {
                Some("completed") => (ToolCallStatus::Completed, Stop::EndTurn),
                Some("interrupted") => (ToolCallStatus::Failed, Stop::Cancelled),
                // Closed: it works no more, and said nothing of how it ended.
                Some("shutdown") => (ToolCallStatus::Completed, Stop::Unknown),
                Some(how @ ("errored" | "notFound")) => {
                    let why = message.unwrap_or(if how == "notFound" {
                        "Codex no longer knows the subagent"
                    } else {
                        "the subagent failed"
                    });
                    (ToolCallStatus::Failed, Stop::Error(why.to_owned()))
                }
                _ => continue,
            };
            if is_open(child.status) {
                child.status = ended;
                child.stop = Some(stop);
                if let Some(message) = message {
                    child.result = Some(message.to_owned());
                    child.push(lines::shorten(message, 240));
                }
                child.show(out);
            }
        }
    }
}
