//! A session's commands that outlive their turn (background terminals, ADR 0041): the
//! decoders of the turns that started them, fed what Codex says of those commands later. In a
//! turn the turn hands them over; between turns the router sends them here
//! (`Rpc::follow_idle`) and a task of the session's (`follower.rs`) turns them into updates the
//! session actor sends (`ProviderSession::background_updates`). The same task feeds the last
//! turn's subagents still working their news between turns (`subagents/parked.rs`).

use std::cell::RefCell;
use std::rc::Rc;

use acplb_core::provider::SessionSink;
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use serde_json::Value;
use tokio::sync::mpsc;

use super::super::decode::{AppDecoder, DecoderOptions, TaskEnd};
use super::super::protocol::methods;
use super::super::rpc::{Inbox, Incoming, Rpc, Stops};
use super::super::subagents::Subagents;
use super::super::terminals;

/// How many times a turn lets the follower run to take what the router sent it before the
/// turn takes the parked subagents up (it takes everything queued in one go).
const SETTLE_YIELDS: usize = 64;

/// How long a closing session waits for Codex to stop its background terminals.
const CLEAN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The most turns whose background commands are followed; past it the oldest turn's are
/// closed (they still run: `/terminals` lists them).
const MAX_TURNS: usize = 16;

/// The turns whose commands still run in the background.
#[derive(Debug, Default)]
pub(crate) struct Background {
    decoders: Vec<AppDecoder>,
    /// The commands the user asked the session's server to stop.
    stops: Option<Rc<Stops>>,
}

/// Shared by the session, its turns and its task between turns (one thread).
pub(crate) type Shared = Rc<RefCell<Background>>;

/// A turn's subagents still working after it, shown between turns (`subagents/parked.rs`):
/// shared by the session and its task between turns.
pub(crate) type Parked = Rc<ParkedView>;

/// The view of the subagents kept between turns, if any, and word to the follower that one was
/// kept (it then waits on what they ask the editor: `follower.rs`).
#[derive(Debug, Default)]
pub(crate) struct ParkedView {
    view: RefCell<Option<Subagents>>,
    kept: tokio::sync::Notify,
}

impl ParkedView {
    pub(crate) fn borrow(&self) -> std::cell::Ref<'_, Option<Subagents>> {
        self.view.borrow()
    }

    pub(crate) fn borrow_mut(&self) -> std::cell::RefMut<'_, Option<Subagents>> {
        self.view.borrow_mut()
    }

    /// Keeps `view` between turns, and tells the follower.
    pub(crate) fn keep(&self, view: Subagents) {
        *self.view.borrow_mut() = Some(view);
        self.kept.notify_one();
    }

    /// Resolves once a view was kept since the last time it did (cancel-safe).
    pub(crate) async fn kept(&self) {
        self.kept.notified().await;
    }
}

impl Background {
    /// Reads which commands the user stopped from `stops` (the server the session is on).
    pub(crate) fn watch_stops(&mut self, stops: Rc<Stops>) {
        self.stops = Some(stops);
    }

    /// Keeps a finished turn's decoder when some of its commands run on.
    pub(crate) fn keep(&mut self, decoder: AppDecoder, out: &mut Vec<SessionUpdate>) {
        if !decoder.following() {
            return;
        }
        self.decoders.push(decoder);
        if self.decoders.len() > MAX_TURNS {
            let mut oldest = self.decoders.remove(0);
            oldest.stop_following(
                ToolCallStatus::Completed,
                "acplb stopped following this command; it may still run (`/terminals` lists it).",
                None,
                out,
            );
        }
    }

    /// Takes a notification about one of the followed commands (its output or its end),
    /// appending its updates to `out`; `false` when it is about none of them.
    pub(crate) fn take(&mut self, method: &str, params: &Value, out: &mut Vec<SessionUpdate>) -> bool {
        let Some(at) = self.decoders.iter().position(|d| d.follows(method, params)) else {
            return false;
        };
        let decoder = &mut self.decoders[at];
        feed(self.stops.as_deref(), decoder, method, params, out);
        if !decoder.following() {
            self.decoders.remove(at);
        }
        true
    }

    /// Ends every followed command's tool call (its server went), an announced task as `task`.
    pub(crate) fn stop_all(
        &mut self,
        status: ToolCallStatus,
        why: &str,
        task: TaskEnd,
        out: &mut Vec<SessionUpdate>,
    ) {
        for mut decoder in self.decoders.drain(..) {
            decoder.stop_following(status, why, Some(task), out);
        }
    }

    /// `async_task_spawned` again for each followed command announced as an AIR task.
    pub(crate) fn announcements(&self) -> Vec<SessionUpdate> {
        self.decoders.iter().flat_map(AppDecoder::announcements).collect()
    }

    /// Whether any command is followed.
    pub(crate) fn is_empty(&self) -> bool {
        self.decoders.is_empty()
    }
}

/// Where questions between turns go: to the session actor, which asks the editor.
pub(crate) type Editor = mpsc::UnboundedSender<acplb_core::provider::BackgroundAsk>;

/// What waits in the inbox after a turn's end: the news of background commands, if anything
/// (their updates go to `sink`; the rest is dropped, as between turns), and what children that
/// work on ask (put to the editor through `editor`). The ended turn's own
/// `decoder`, not kept yet, takes the news of the commands it leaves running: one that ended
/// just after the turn must not be lost.
pub(crate) fn take_rest(
    background: &Shared,
    decoder: &mut AppDecoder,
    subagents: &mut Subagents,
    inbox: &mut Inbox,
    rpc: &Rpc,
    editor: &Editor,
    sink: &dyn SessionSink,
) {
    let mut out = Vec::new();
    while let Some(msg) = inbox.try_take() {
        if let Incoming::Request { id, method, params } = &msg {
            // Asked as the turn ended: a child that works on asks the editor between turns;
            // anything else is refused, as between turns.
            let view = subagents.parks().then_some(&mut *subagents);
            super::follower::ask_or_refuse(view, id, method, params, editor, rpc, &mut out);
        }
        if let Incoming::Notification { method, params } = &msg {
            if subagents.parks() && subagents.is_child(params) {
                // A child's news, shown as its own between turns (its error words cleared of
                // secrets first, as in a turn).
                let redacted = super::turn::redact_error(rpc, method, params);
                subagents.take(method, redacted.as_ref().unwrap_or(params), &mut out);
            } else if decoder.follows(method, params) {
                let stops = background.borrow().stops.clone();
                feed(stops.as_deref(), decoder, method, params, &mut out);
            } else {
                background.borrow_mut().take(method, params, &mut out);
            }
        }
    }
    for update in out {
        sink.update(update);
    }
}

/// Feeds `decoder` a notification about a command it follows, first marking the command
/// stopped when it is its end and the user stopped it (`stops` forgets it then).
fn feed(
    stops: Option<&Stops>,
    decoder: &mut AppDecoder,
    method: &str,
    params: &Value,
    out: &mut Vec<SessionUpdate>,
) {
    if method == methods::ITEM_COMPLETED
        && let (Some(stops), Some(item), Some(thread)) = (
            stops,
            params.pointer("/item/id").and_then(Value::as_str),
            params.get("threadId").and_then(Value::as_str),
        )
        && stops.take(thread, item)
    {
        decoder.mark_stopped(item);
    }
    let _signal = decoder.notification(method, params, out);
}

/// A closing session's background terminals: Codex stops every one of its thread (within
/// [`CLEAN_WAIT`]).
pub(crate) async fn stop_on_close(rpc: &Rpc, thread: &str) {
    match tokio::time::timeout(CLEAN_WAIT, terminals::clean(rpc, thread)).await {
        Ok(Ok(())) => {}
        Ok(Err(why)) => tracing::warn!(%why, "a closed session's background terminals"),
        Err(_) => tracing::warn!("codex did not stop a closed session's background terminals in time"),
    }
}

/// The subagents a turn shows: the last turn's still working (`parked`) when they are of the
/// same thread as `fresh`, taken up with this turn's `options` once the follower has taken
/// everything the router sent it (`idle`); else `fresh`. Children of another thread (the
/// conversation started over) are shown gone. What to show of them goes to `out`.
pub(crate) async fn take_up(
    parked: &Parked,
    idle: Option<&mpsc::Sender<Incoming>>,
    fresh: Subagents,
    options: DecoderOptions,
    out: &mut Vec<SessionUpdate>,
) -> Subagents {
    if parked.borrow().is_none() {
        return fresh;
    }
    // The follower runs on this thread: each yield lets it take what is queued.
    if let Some(idle) = idle {
        for _ in 0..SETTLE_YIELDS {
            if idle.capacity() == idle.max_capacity() {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    match parked.borrow_mut().take() {
        Some(mut kept) if kept.parent() == fresh.parent() => {
            kept.next_turn(options, out);
            kept
        }
        Some(mut gone) => {
            gone.close_open("Its parent's conversation started over.", out);
            fresh
        }
        None => fresh,
    }
}

#[cfg(test)]
#[path = "background_tests.rs"]
mod tests;
