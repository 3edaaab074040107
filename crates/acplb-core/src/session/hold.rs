//! Updates held back while a `session/load` of the open session replays its history: they are
//! recorded as usual but reach the client only after the replay, so the client sees the
//! conversation in order; meanwhile the provider waits, as it does for a slow client.

use std::cell::{Cell, RefCell};

use agent_client_protocol::Client;
use agent_client_protocol::UntypedMessage;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::SessionNotification;
use tokio::sync::Notify;

use super::sink::send_counted;
use crate::transport::OutputFlow;

/// One notification held back: a typed update, or an update ACP's types have no variant for
/// (`provider::followers`).
#[derive(Debug)]
pub(crate) enum Held {
    Update(Box<SessionNotification>),
    Follower(UntypedMessage),
}

impl Held {
    /// Sends it, counted in `flow`.
    pub(crate) fn send(self, cx: &ConnectionTo<Client>, flow: &OutputFlow) {
        match self {
            Self::Update(n) => send_counted(cx, flow, *n),
            Self::Follower(n) => send_counted(cx, flow, n),
        }
    }
}

/// One session's held updates; shared by its actor, its sinks and the replays under way.
#[derive(Debug, Default)]
pub(crate) struct Hold {
    /// Replays under way; updates are held while there is one.
    replays: Cell<usize>,
    held: RefCell<Vec<Held>>,
    released: Notify,
}

impl Hold {
    /// A replay starts: updates from now on wait for [`Hold::release`].
    pub(crate) fn start(&self) {
        self.replays.set(self.replays.get() + 1);
    }

    /// Whether a replay is under way (what is sent now waits: [`Hold::keep`]).
    pub(crate) fn holding(&self) -> bool {
        self.replays.get() > 0
    }

    /// Keeps `notification` until the replays under way are done.
    pub(crate) fn keep(&self, notification: Held) {
        self.held.borrow_mut().push(notification);
    }

    /// A replay is done: once none is under way, what was held is sent, in order.
    pub(crate) fn release(&self, cx: &ConnectionTo<Client>, flow: &OutputFlow) {
        let left = self.replays.get().saturating_sub(1);
        self.replays.set(left);
        if left > 0 {
            return;
        }
        let held = std::mem::take(&mut *self.held.borrow_mut());
        for notification in held {
            notification.send(cx, flow);
        }
        self.released.notify_waiters();
    }

    /// Resolves once no replay is under way (providers wait here before reading more).
    pub(crate) async fn released(&self) {
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if self.replays.get() == 0 {
                return;
            }
            released.await;
        }
    }
}
