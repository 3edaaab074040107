//! Commands that outlive their turn: a unified exec command still open when its turn ends
//! runs on in a process of Codex's (a background terminal; `exec_command` handed the model its
//! process id). Its tool call stays open, says so, and goes on taking the command's output
//! and its end, which Codex sends later (between turns, or in a later turn, with the turn id
//! of the turn that started it). The session keeps the turn's decoder for that
//! (`session/background.rs`).

use acplb_core::provider::followers;
use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
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

/// A command announced to a `JetBrains` AIR client as an async task (`async_task_spawned`,
/// as the TS peer sends it), whose end it is told (`async_task_state_update`, ADR 0051).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Task {
    /// The user stopped it (`/terminals stop`, `_session/async_task/stop`): it ends `stopped`.
    stopped: bool,
}

/// How an announced task ended, in AIR's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskEnd {
    Completed,
    Failed,
    Stopped,
}

impl TaskEnd {
    fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
        }
    }
}

/// `async_task_spawned` for the command of call `id` titled `name`; its task id is the tool
/// call id, which `_session/async_task/stop` takes.
fn spawned(id: &ToolCallId, name: &str) -> Value {
    json!({"sessionUpdate": "async_task_spawned", "asyncTaskId": id.to_string(), "name": name,
        "taskType": "shell", "showInTranscript": false, "canStop": true, "toolCallId": id.to_string()})
}

/// `async_task_state_update` of the task of call `id`.
fn state_update(id: &ToolCallId, end: TaskEnd) -> Value {
    json!({"sessionUpdate": "async_task_state_update", "asyncTaskId": id.to_string(),
        "state": end.as_str(), "toolCallId": id.to_string()})
}

/// An update of call `id` that changes nothing, carrying `follower`.
fn carrier(id: &ToolCallId, follower: Value) -> SessionUpdate {
    let mut update = ToolCallUpdate::new(id.clone(), ToolCallUpdateFields::new());
    followers::follow(&mut update, follower);
    SessionUpdate::ToolCallUpdate(update)
}

impl AppDecoder {
    /// The task of call `id` ended: its state follows the call's last update in `out` from
    /// `from` on (its end), `stopped` if the user stopped it, else as the call ended.
    pub(super) fn task_ended(id: &ToolCallId, task: Task, out: &mut Vec<SessionUpdate>, from: usize) {
        let failed = last_of(id, out, from).is_none_or(|at| {
            matches!(&out[at], SessionUpdate::ToolCallUpdate(u) if u.fields.status != Some(ToolCallStatus::Completed))
        });
        let end = match (task.stopped, failed) {
            (true, _) => TaskEnd::Stopped,
            (false, true) => TaskEnd::Failed,
            (false, false) => TaskEnd::Completed,
        };
        tell_task(id, end, out, from);
    }

    /// The user stopped the command of Codex's item `item_id`: its task ends `stopped`.
    pub(crate) fn mark_stopped(&mut self, item_id: &str) {
        if let Some(open) = self.open.iter_mut().find(|c| c.item_id == item_id)
            && let Some(task) = open.task.as_mut()
        {
            task.stopped = true;
        }
    }

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
            let id = open.call.tool_call_id.clone();
            let mut update = ToolCallUpdate::new(id.clone(), fields).meta(marked.then(backgrounded));
            let mut open = open;
            if marked {
                followers::follow(&mut update, spawned(&id, &open.call.title));
                open.task = Some(Task::default());
            }
            out.push(SessionUpdate::ToolCallUpdate(update));
            self.open.push(open);
        }
    }

    /// `async_task_spawned` again for each command it follows that was announced as an AIR
    /// task, each on an update of its call that changes nothing else.
    pub(crate) fn announcements(&self) -> Vec<SessionUpdate> {
        self.open
            .iter()
            .filter(|open| open.task.is_some())
            .map(|open| {
                carrier(
                    &open.call.tool_call_id,
                    spawned(&open.call.tool_call_id, &open.call.title),
                )
            })
            .collect()
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

    /// Ends the commands it still follows as `status`, with `why` (the server went, or acplb
    /// follows too many); an announced task is told it ended as `task`, if given (a command
    /// acplb merely stops following still runs, and can still be stopped).
    pub(crate) fn stop_following(
        &mut self,
        status: ToolCallStatus,
        why: &str,
        task: Option<TaskEnd>,
        out: &mut Vec<SessionUpdate>,
    ) {
        let tasks: Vec<ToolCallId> = self
            .open
            .iter()
            .filter(|c| c.task.is_some())
            .map(|c| c.call.tool_call_id.clone())
            .collect();
        let from = out.len();
        self.close_open_tool_calls_because(status, Some(why), out);
        if let Some(end) = task {
            for id in tasks {
                tell_task(&id, end, out, from);
            }
        }
    }
}

/// Where in `out`, at or after `from`, the last update of call `id` is.
fn last_of(id: &ToolCallId, out: &[SessionUpdate], from: usize) -> Option<usize> {
    let at = out[from.min(out.len())..]
        .iter()
        .rposition(|u| matches!(u, SessionUpdate::ToolCallUpdate(u) if &u.tool_call_id == id))?;
    Some(from + at)
}

/// Hangs the task end `end` on the last update of call `id` in `out` at or after `from`, or
/// on an empty update of its own when there is none.
fn tell_task(id: &ToolCallId, end: TaskEnd, out: &mut Vec<SessionUpdate>, from: usize) {
    if let Some(at) = last_of(id, out, from)
        && let SessionUpdate::ToolCallUpdate(update) = &mut out[at]
    {
        followers::follow(update, state_update(id, end));
        return;
    }
    out.push(carrier(id, state_update(id, end)));
}
