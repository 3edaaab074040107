//! A session's subagents as ACP tool calls (ADR 0034). Codex runs each spawned agent on a
//! thread of its own; the router sends that thread's messages to the session of the thread
//! that spawned it (`rpc/children.rs`), and here each child becomes one tool call titled by its
//! task, whose content lists what the child said and did (one line each, `lines.rs`), and whose
//! status follows the child's turns: in progress while one runs, completed or failed with the
//! child's last message as its result. The child's approval requests are put to the editor as
//! the session's own, read with a decoder of the child's own items. A client that takes
//! subagent sessions (ADR 0055) sees each child as a session of its own instead
//! (`sessions.rs`): announced, its state following its turns, its decoder's updates its own,
//! its approvals asked in its name; what earlier turns announced is remembered (`known.rs`).
//! Pure: `stop.rs` does the I/O of a cancel.

use acplb_core::capabilities::{SubagentSessions, air_meta};
use acplb_core::provider::route;
use agent_client_protocol::v1::schema::{
    SessionUpdate, ToolCall, ToolCallId, ToolCallStatus, ToolCallUpdateFields, ToolKind,
};
use serde_json::{Value, json};

use super::approval::Ask;
use super::decode::{AppDecoder, DecoderOptions};
use super::protocol::methods;
use crate::render::{emit, names};
use child::{Child, is_open};
use sessions::Stop;
use spawned::{COLLAB_CALL, SUBAGENT_ACTIVITY};

mod asked;
#[cfg(test)]
#[path = "asked_tests.rs"]
mod asked_tests;
mod child;
mod known;
#[cfg(test)]
#[path = "known_tests.rs"]
mod known_tests;
mod lines;
mod news;
mod parked;
mod sessions;
#[cfg(test)]
#[path = "sessions_tests.rs"]
mod sessions_tests;
pub(crate) mod spawned;
mod stop;
#[cfg(test)]
mod tests;
mod tree;

pub(crate) use asked::{NotAsked, OpenAsk};
pub(crate) use stop::stop;

/// How many subagents one turn shows; later ones are not shown (their asks are refused).
const SHOWN_LIMIT: usize = 64;
/// How many lines a subagent's tool call keeps (the latest; a first line counts the others).
const LINES_KEPT: usize = 40;
/// The longest title, in characters.
const TITLE_CHARS: usize = 80;
/// How many announced subagent sessions a session remembers across its turns.
const ANNOUNCED_KEPT: usize = 1024;

/// The subagents of one turn of one session.
#[derive(Debug)]
pub(crate) struct Subagents {
    parent: String,
    options: DecoderOptions,
    children: Vec<Child>,
    /// The parent's ACP session, when the client takes subagent sessions (ADR 0055).
    sessions_of: Option<String>,
    /// Whether the parent's answer waits for its children (AIR's subagent sessions).
    waits: bool,
    /// The children earlier turns announced as sessions: each one's life (`known.rs`).
    known: Vec<String>,
    /// Kept between turns (`parked.rs`): a child seen now offers no cancel.
    parked: bool,
    /// What children asked the editor between turns, not answered yet (`asked.rs`).
    open_between: Vec<OpenAsk>,
}

impl Subagents {
    /// No subagents yet, for a turn on thread `parent` whose ids start as `options` say.
    pub(crate) fn new(parent: &str, options: DecoderOptions) -> Self {
        Self {
            parent: parent.to_owned(),
            options,
            children: Vec::new(),
            sessions_of: None,
            waits: false,
            known: Vec::new(),
            parked: false,
            open_between: Vec::new(),
        }
    }

    /// Shows each child as a session of its own, of the parent's ACP session `session`, when
    /// the client takes them (`how`, ADR 0055).
    #[must_use]
    pub(crate) fn with_sessions(mut self, session: String, how: Option<SubagentSessions>) -> Self {
        self.sessions_of = how.map(|_| session);
        self.waits = how == Some(SubagentSessions::Air);
        self
    }

    /// Whether the parent's answer waits for its children.
    pub(crate) fn waits(&self) -> bool {
        self.waits
    }

    /// Whether a child still works: its turn runs, or this turn started it or gave it work
    /// and it has not ended since. A child an item merely names (a wait) is not waited for.
    pub(crate) fn working(&self) -> bool {
        self.children
            .iter()
            .any(|c| is_open(c.status) && (c.turn_id.is_some() || c.due))
    }

    /// Takes a notification about the session's subagents (a child's own, or an item of the
    /// parent's naming children) and appends what the editor should see; `false` for anything
    /// else, which the session's decoder reads.
    pub(crate) fn take(&mut self, method: &str, params: &Value, out: &mut Vec<SessionUpdate>) -> bool {
        if method == methods::SERVER_REQUEST_RESOLVED
            && let Some(id) = params.get("requestId")
        {
            // Codex settled what a child asked (its turn was interrupted): it is open no more.
            self.resolved(id, out);
        }
        if let Some(spawned) = spawned::spawned(method, params) {
            let title = title(params);
            let task = params.pointer("/item/prompt").and_then(Value::as_str);
            let due = spawned::gives_work(method, params);
            for child in spawned.children {
                let Some(child) = self.child(child, title.as_deref(), task, out) else {
                    continue;
                };
                // Who spawned it: the message that starts its work says (a wait names others').
                if due && child.spawner.is_none() && child.thread_id != spawned.parent {
                    child.spawner = Some(spawned.parent.to_owned());
                }
                if due && child.turn_id.is_none() {
                    child.due = true;
                    // A known session spawned anew works again.
                    if child.session.is_some() && !is_open(child.status) {
                        child.status = ToolCallStatus::InProgress;
                        child.stop = None;
                    }
                }
            }
        }
        let thread = params
            .get("threadId")
            .or_else(|| params.pointer("/thread/id"))
            .and_then(Value::as_str);
        match thread {
            Some(thread) if thread != self.parent => {
                self.childs_message(thread, method, params, out);
                true
            }
            _ => {
                let kind = params.pointer("/item/type").and_then(Value::as_str);
                let ours = matches!(kind, Some(SUBAGENT_ACTIVITY | COLLAB_CALL));
                if ours && method == methods::ITEM_COMPLETED {
                    self.states(params, out);
                }
                ours
            }
        }
    }

    /// The ask a child's request becomes, read with the child's items; `None` for the
    /// parent's requests and what a child asks that is no approval.
    pub(crate) fn ask(&mut self, method: &str, params: &Value) -> Option<Ask> {
        let thread = params.get("threadId").and_then(Value::as_str)?;
        let child = self.children.iter_mut().find(|c| c.thread_id == thread)?;
        let mut ask = Ask::from_request(method, params, &child.decoder)?;
        if child.session.is_some() {
            // Asked in the child's own session, whose tool call it is: its decoder ends it.
            return Some(ask);
        }
        // Whose ask it is, as the prompt shows it: `Subagent lister: echo hi`.
        let who = child
            .task
            .as_deref()
            .map_or_else(|| "Subagent".to_owned(), |t| format!("Subagent {t}"));
        let what = ask
            .tool_call
            .fields
            .title
            .take()
            .unwrap_or_else(|| "an action".to_owned());
        ask.tool_call.fields.title = Some(format!("{who}: {what}"));
        if let Some(item) = params.get("itemId").and_then(Value::as_str) {
            child
                .asked
                .push((item.to_owned(), ask.tool_call.tool_call_id.clone()));
        }
        Some(ask)
    }

    /// The session of the child whose request `params` are, when it is shown as one.
    pub(crate) fn session_of(&self, params: &Value) -> Option<String> {
        let thread = params.get("threadId").and_then(Value::as_str)?;
        let child = self.children.iter().find(|c| c.thread_id == thread)?;
        child.session.clone()
    }

    /// The editor was asked something of the child on `thread` (`asking`), or one such ask was
    /// answered: a child shown as a session, still working, says it waits for the editor, then
    /// that it runs again once nothing it asked is open.
    pub(crate) fn editor_asks(&mut self, thread: &str, asking: bool, out: &mut Vec<SessionUpdate>) {
        let Some(child) = self.children.iter_mut().find(|c| c.thread_id == thread) else {
            return;
        };
        child.open_asks = if asking {
            child.open_asks + 1
        } else {
            child.open_asks.saturating_sub(1)
        };
        let Some(session) = child.session.as_deref().filter(|_| is_open(child.status)) else {
            return;
        };
        match (asking, child.open_asks) {
            (true, 1) => out.push(sessions::requires_action(session)),
            (false, 0) => out.extend(child.session_state()),
            _ => {}
        }
    }

    /// The child shown as session `session`, and the turn of its the editor may cancel now
    /// (its thread, its running turn); `None` when there is none to cancel.
    pub(crate) fn cancellable(&self, session: &str) -> Option<(String, String)> {
        let child = self
            .children
            .iter()
            .find(|c| c.session.as_deref() == Some(session) && is_open(c.status) && !c.parked)?;
        Some((child.thread_id.clone(), child.turn_id.clone()?))
    }

    /// Whether `params` are about another thread than the session's (a child's request).
    pub(crate) fn is_child(&self, params: &Value) -> bool {
        params
            .get("threadId")
            .and_then(Value::as_str)
            .is_some_and(|t| t != self.parent)
    }

    /// The children's threads, and the turn each runs now.
    pub(crate) fn threads(&self) -> Vec<(String, Option<String>)> {
        self.children
            .iter()
            .map(|c| (c.thread_id.clone(), c.turn_id.clone()))
            .collect()
    }

    /// The parent's turn ended (`interrupted` or not): children still working are shown as
    /// such and their calls end, or, shown as sessions of an ACP client, go on being shown
    /// (`parked.rs`).
    pub(crate) fn turn_ended(&mut self, interrupted: bool, out: &mut Vec<SessionUpdate>) {
        if interrupted {
            self.end_open(
                ToolCallStatus::Failed,
                &Stop::Cancelled,
                "Cancelled before it finished.",
                out,
            );
        } else if self.follows_between_turns() {
            self.park(out);
        } else {
            self.end_open(
                ToolCallStatus::Completed,
                &Stop::Unknown,
                "Still working when the turn ended; what it does next is not shown.",
                out,
            );
        }
    }

    /// Ends every child's call still open as failed, adding `why` to its lines (Codex went: a
    /// child's session's state is then unknown).
    pub(crate) fn close_open(&mut self, why: &str, out: &mut Vec<SessionUpdate>) {
        self.end_open(ToolCallStatus::Failed, &Stop::Unknown, why, out);
    }

    fn end_open(&mut self, status: ToolCallStatus, stop: &Stop, why: &str, out: &mut Vec<SessionUpdate>) {
        for child in &mut self.children {
            if is_open(child.status) {
                child.end(status, stop.clone(), why.to_owned());
                child.show(out);
            }
        }
    }

    /// The child on `thread`, shown now if it is new (and there is room).
    fn child(
        &mut self,
        thread: &str,
        title: Option<&str>,
        task: Option<&str>,
        out: &mut Vec<SessionUpdate>,
    ) -> Option<&mut Child> {
        let index = match self.children.iter().position(|c| c.thread_id == thread) {
            Some(index) => index,
            None if self.children.len() >= SHOWN_LIMIT => return None,
            None => {
                let call_id = ToolCallId::new(format!("{}agent-{thread}", self.options.id_prefix));
                let mut options = self.options.clone();
                options.id_prefix = format!("{}a{}-", self.options.id_prefix, self.children.len());
                let air = (self.options.air.as_ref()).map(|_| air_meta("subagent", true.into()));
                let generation = self.known_generation(thread);
                let life = known::life(thread, generation.unwrap_or(1));
                let session = (self.sessions_of.as_deref()).map(|parent| route::child_id(parent, &life));
                // One an earlier turn announced is the same session, going on: idle until its
                // next turn starts (an item that only names it changes nothing).
                let known = session.is_some() && generation.is_some();
                if let Some(session) = session.as_deref().filter(|_| !known) {
                    out.push(sessions::announced(session, title, task));
                } else if session.is_none() {
                    let shown = title.map_or_else(|| "Subagent".to_owned(), |t| format!("Subagent: {t}"));
                    let call = ToolCall::new(call_id.clone(), shown)
                        .name(names::SPAWN_AGENT.to_owned())
                        .kind(ToolKind::Think)
                        .status(ToolCallStatus::InProgress)
                        .raw_input(json!({ "threadId": thread }))
                        .meta(air.clone());
                    emit::tool_started(out, call);
                }
                self.children.push(Child {
                    thread_id: thread.to_owned(),
                    call_id,
                    task: title.map(str::to_owned),
                    description: task.map(str::to_owned),
                    generation: generation.unwrap_or(1),
                    // An earlier turn's end was shown (AIR waits for it).
                    ended_shown: known,
                    parked: self.parked,
                    turn_id: None,
                    status: if known {
                        ToolCallStatus::Completed
                    } else {
                        ToolCallStatus::InProgress
                    },
                    lines: Vec::new(),
                    dropped: 0,
                    result: None,
                    decoder: AppDecoder::new(options),
                    asked: Vec::new(),
                    meta: air,
                    session,
                    due: false,
                    spawner: None,
                    open_asks: 0,
                    stop: None,
                });
                return self.children.last_mut();
            }
        };
        // A session an earlier turn announced keeps the title it was given then.
        let known = self.known_generation(thread).is_some();
        let child = &mut self.children[index];
        if let Some(title) = title.filter(|_| child.task.is_none()) {
            child.task = Some(title.to_owned());
            if let Some(session) = child.session.as_deref().filter(|_| !known) {
                out.push(sessions::retitled(session, title));
            } else if child.session.is_none() {
                let fields = ToolCallUpdateFields::new().title(format!("Subagent: {title}"));
                emit::tool_progress(out, child.call_id.clone(), fields);
            }
        }
        Some(child)
    }
}

/// A child's task as its parent's item gives it: the prompt of a spawn call, else the last
/// part of the agent's path (`/root/lister` → `lister`), shortened.
fn title(params: &Value) -> Option<String> {
    let item = params.get("item")?;
    let task = item
        .get("prompt")
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .or_else(|| {
            let path = item.get("agentPath").and_then(Value::as_str)?;
            path.rsplit('/').find(|part| !part.is_empty())
        })?;
    Some(lines::shorten(task, TITLE_CHARS))
}
