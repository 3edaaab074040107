//! Where what the server sends goes: each thread's messages to the session whose turn runs on
//! it (between turns dropped, or refused for requests, except a command's output and end and a
//! subagent's news and requests, which go to the session's follower), the server's requests no
//! session can answer refused, and the backlog of messages routed and not taken, which pauses
//! the reader.

use std::rc::Rc;

use serde_json::Value;
use tokio::sync::mpsc;

use super::super::protocol::methods;

use super::{Incoming, Rpc};

/// How many messages may wait for running turns before the reader stops reading the server:
/// with the editor's own backpressure this bounds acplb's memory whatever Codex prints.
pub(super) const BACKLOG_LIMIT: usize = 256;

/// One thread's messages, as its session takes them. Taking one gives its flow-control credit
/// back to the reader (the backlog that pauses it), so no taker can forget to.
#[derive(Debug)]
pub(crate) struct Inbox {
    rx: mpsc::UnboundedReceiver<Incoming>,
    rpc: Rc<Rpc>,
}

impl Inbox {
    /// The next message; `None` once the connection is torn down. Cancel-safe: a message is
    /// taken (and its credit given back) only when this resolves.
    pub(crate) async fn recv(&mut self) -> Option<Incoming> {
        let msg = self.rx.recv().await?;
        self.rpc.took(&msg);
        Some(msg)
    }

    /// The next message if one waits (its credit given back).
    pub(crate) fn try_take(&mut self) -> Option<Incoming> {
        let msg = self.rx.try_recv().ok()?;
        self.rpc.took(&msg);
        Some(msg)
    }

    /// How many messages wait.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rx.len()
    }

    /// Takes what waits: whether it was nothing but word that the server is gone (so it said
    /// nothing else since the inbox was last drained).
    pub(crate) fn only_gone(&mut self) -> bool {
        let mut only = true;
        while let Some(msg) = self.try_take() {
            only &= matches!(msg, Incoming::Gone(_));
        }
        only
    }

    /// Drops what waits (messages of an earlier turn, or late ones of this turn).
    pub(crate) fn drain(&mut self) {
        while let Ok(msg) = self.rx.try_recv() {
            self.rpc.took(&msg);
        }
    }
}

/// Where one thread's messages go.
#[derive(Debug)]
pub(super) struct Route {
    pub(super) tx: mpsc::UnboundedSender<Incoming>,
    /// A turn runs and takes them; between turns notifications are dropped (they belong to
    /// no turn) and requests refused, so an idle session holds nothing…
    active: bool,
    /// …except the output and ends of commands, which go here between turns (a session
    /// follows its background terminals: `session/background.rs`), while there is room.
    idle: Option<mpsc::Sender<Incoming>>,
}

impl Route {
    /// Tells the session's follower between turns `msg`, if it has one.
    pub(super) fn tell_idle(&self, msg: Incoming) {
        if let Some(idle) = &self.idle {
            tell(idle, msg);
        }
    }
}

/// Tells a session's follower between turns `msg`, if it has room for it.
fn tell(idle: &mpsc::Sender<Incoming>, msg: Incoming) {
    if let Err(e) = idle.try_send(msg) {
        tracing::debug!(error = %e, "news of work outliving its turn, between turns; dropped");
    }
}

/// Whether a notification between turns may be about a command that outlived its turn.
fn about_a_command(method: &str) -> bool {
    matches!(method, methods::COMMAND_OUTPUT_DELTA | methods::ITEM_COMPLETED)
}

impl Rpc {
    /// Whether a turn runs on the server (and so waits on it).
    pub(crate) fn turn_running(&self) -> bool {
        self.threads.borrow().values().any(|r| r.active)
    }

    /// Whether nothing waits on the server: no turn runs and no request is unanswered.
    pub(crate) fn idle(&self) -> bool {
        !self.turn_running() && self.pending.borrow().is_empty()
    }

    /// Routes what the server sends about `thread_id` to the inbox returned (replacing an
    /// earlier route).
    pub(crate) fn subscribe(self: &Rc<Self>, thread_id: &str) -> Inbox {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(gone) = self.gone() {
            let _ignored = tx.send(Incoming::Gone(gone));
        } else {
            self.threads.borrow_mut().insert(
                thread_id.to_owned(),
                Route {
                    tx,
                    active: false,
                    idle: None,
                },
            );
        }
        Inbox {
            rx,
            rpc: Rc::clone(self),
        }
    }

    /// Whether a turn of `thread_id` runs and takes its messages.
    pub(crate) fn set_active(&self, thread_id: &str, active: bool) {
        if let Some(route) = self.threads.borrow_mut().get_mut(thread_id) {
            route.active = active;
        }
    }

    /// Between turns, the output and ends of `thread_id`'s commands go to `idle` (dropped
    /// when it is full).
    pub(crate) fn follow_idle(&self, thread_id: &str, idle: mpsc::Sender<Incoming>) {
        if let Some(route) = self.threads.borrow_mut().get_mut(thread_id) {
            route.idle = Some(idle);
        }
    }

    /// A running turn took one message off its inbox: the reader may read one more.
    fn took(&self, msg: &Incoming) {
        if matches!(msg, Incoming::Gone(_)) {
            return;
        }
        let left = self.backlog.get().saturating_sub(1);
        self.backlog.set(left);
        if left < BACKLOG_LIMIT {
            self.room.notify_waiters();
        }
    }

    /// Resolves when running turns have room for more messages (cancel-safe).
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            if self.backlog.get() < BACKLOG_LIMIT || self.gone.borrow().is_some() {
                return;
            }
            notified.await;
        }
    }

    /// Stops routing `thread_id`.
    pub(crate) fn unsubscribe(&self, thread_id: &str) {
        self.threads.borrow_mut().remove(thread_id);
        self.children.borrow_mut().forget(thread_id);
    }

    pub(super) fn route(&self, incoming: Incoming) {
        let params = match &incoming {
            Incoming::Notification { params, .. } | Incoming::Request { params, .. } => params,
            Incoming::Gone(_) => return,
        };
        if let Incoming::Notification { method, .. } = &incoming {
            if method == methods::MCP_OAUTH_LOGIN_COMPLETED {
                // Named by its `loginId`, whoever asked; it may name the thread it was for.
                self.logins.ended(params.clone());
                return;
            }
            let threads = self.threads.borrow();
            self.children
                .borrow_mut()
                .learn(method, params, |t| threads.contains_key(t));
        }
        // A subagent's messages go to the session of the thread that spawned it.
        let children = self.children.borrow();
        let thread = thread_of(params).map(|t| children.owner(t));
        let of_child = thread.is_some() && thread != thread_of(params);
        let found = thread.and_then(|t| {
            self.threads
                .borrow()
                .get(t)
                .map(|r| (r.tx.clone(), r.active, r.idle.clone()))
        });
        drop(children);
        if let Some((_, false, Some(idle))) = &found {
            match &incoming {
                // Between turns, news of a background command, or of a subagent that outlived
                // its parent's turn, goes to the session's follower.
                Incoming::Notification { method, .. } if about_a_command(method) || of_child => {
                    // A child's streamed pieces give way while the queue runs low, so that the
                    // ends (its items' whole text, its turn's end) still fit.
                    if of_child && is_piece(method) && idle.capacity() < idle.max_capacity() / 4 {
                        tracing::trace!(%method, "a subagent's streamed piece between turns; shed");
                        return;
                    }
                    tell(idle, incoming);
                    return;
                }
                // What such a subagent asks goes there too, to be put to the editor (ADR
                // 0059); with no room it is refused.
                Incoming::Request { .. } if of_child => {
                    if let Err(e) = idle.try_send(incoming)
                        && let Incoming::Request { id, method, .. } = e.into_inner()
                    {
                        tracing::warn!(%method, "a subagent asked something between turns with no room to take it; declined");
                        self.respond_error(&id, -32603, "no turn of this session is running");
                    }
                    return;
                }
                _ => {}
            }
        }
        let route = found.map(|(tx, active, _)| (tx, active));
        match (route, incoming) {
            (Some((tx, true)), incoming) => match tx.send(incoming) {
                Ok(()) => self.backlog.set(self.backlog.get() + 1),
                Err(mpsc::error::SendError(Incoming::Request { id, method, .. })) => {
                    tracing::debug!(%method, "a request for a session that is gone; declined");
                    self.respond_error(&id, -32603, "the session this was for has ended");
                }
                Err(_) => {}
            },
            (Some((_, false)), Incoming::Request { id, method, .. }) => {
                tracing::warn!(%method, "codex app-server asked something between turns; declined");
                self.respond_error(&id, -32603, "no turn of this session is running");
            }
            (Some((_, false)), Incoming::Notification { method, .. }) => {
                tracing::trace!(%method, "a notification between turns; dropped");
            }
            (None, Incoming::Request { id, method, .. }) => {
                tracing::warn!(%method, "codex app-server asked something no session can answer; declined");
                self.respond_error(&id, -32601, "acplb cannot answer this request");
            }
            (None, Incoming::Notification { method, params }) => {
                if method == methods::RATE_LIMITS_UPDATED {
                    *self.rate_limits.borrow_mut() = Some(params);
                } else if method == methods::LOGIN_COMPLETED {
                    self.logins.ended(params);
                    self.account_changed();
                } else if method == methods::ACCOUNT_UPDATED {
                    self.account_changed();
                } else if method == methods::SKILLS_CHANGED {
                    self.skills_changed.send_modify(|n| *n = n.wrapping_add(1));
                } else {
                    tracing::trace!(%method, "a notification for no session");
                }
            }
            (_, Incoming::Gone(_)) => {}
        }
    }
}

impl Rpc {
    fn account_changed(&self) {
        if let Some(tx) = self.account_changed.borrow().as_ref() {
            tx.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// Whether `method` streams a piece of an item whose end repeats it whole (`…/delta`,
/// `…Delta`).
fn is_piece(method: &str) -> bool {
    method.ends_with("/delta") || method.ends_with("Delta")
}

/// The thread a server message is about: `params.threadId`, or `params.thread.id`
/// (`thread/started`), or `params.conversationId` (legacy requests).
fn thread_of(params: &Value) -> Option<&str> {
    params
        .get("threadId")
        .or_else(|| params.get("thread").and_then(|t| t.get("id")))
        .or_else(|| params.get("conversationId"))
        .and_then(Value::as_str)
}
