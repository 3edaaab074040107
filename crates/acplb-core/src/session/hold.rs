//! Updates held back while a `session/load` of the open session replays its history: they are
//! recorded as usual but reach the client only after the replay, so the client sees the
//! conversation in order; meanwhile the provider waits, as it does for a slow client.

use std::cell::{Cell, RefCell};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::SessionNotification;
use tokio::sync::Notify;

use super::sink::send_counted;
use crate::transport::OutputFlow;

/// One session's held updates; shared by its actor, its sinks and the replays under way.
#[derive(Debug, Default)]
pub(crate) struct Hold {
    /// Replays under way; updates are held while there is one.
    replays: Cell<usize>,
    held: RefCell<Vec<SessionNotification>>,
    released: Notify,
}

impl Hold {
    /// A replay starts: updates from now on wait for [`Hold::release`].
    pub(crate) fn start(&self) {
        self.replays.set(self.replays.get() + 1);
    }

    /// Keeps `notification` for later if a replay is under way; else gives it back.
    pub(crate) fn keep(&self, notification: SessionNotification) -> Option<SessionNotification> {
        if self.replays.get() == 0 {
            return Some(notification);
        }
        self.held.borrow_mut().push(notification);
        None
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
            send_counted(cx, flow, notification);
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
