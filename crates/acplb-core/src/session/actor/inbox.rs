//! A session's input queue (ADR 0013) as its actor holds it: opened and watched by a task of
//! its own, claims made and settled on the blocking pool, and what it holds given back when
//! the session stops. The file I/O never runs on the runtime thread; results come back
//! through the actor's mailbox.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, WeakUnboundedSender};
use tokio::task::AbortHandle;

use super::SessionMsg;
use crate::sessions::queue::{Claimed, Queue, QueueError, QueueWatcher};

/// How old a temporary file must be before opening the queue removes it: a sender may be
/// writing one right now.
const ABANDONED_TEMP: Duration = Duration::from_secs(600);

/// One session's input queue.
pub(crate) struct Inbox {
    /// The actor's own mailbox, weakly: the inbox must not keep a closed session alive.
    mailbox: WeakUnboundedSender<SessionMsg>,
    /// Whether the client shows `notice` updates.
    pub(super) shows_notices: bool,
    /// The queue when no blocking call has it (`None` while it opens and while a claim runs).
    queue: Option<Queue>,
    /// A claim is running on the blocking pool; its result is on its way to the mailbox.
    claiming: bool,
    /// A wake-up came while the queue was busy: look again when it is back.
    again: bool,
    /// Messages announced to the user and waiting for the next prompt, oldest first.
    pub(super) held: Vec<Claimed>,
    /// The task that opens and watches the queue.
    watcher: AbortHandle,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("claiming", &self.claiming)
            .field("held", &self.held.len())
            .finish_non_exhaustive()
    }
}

impl Inbox {
    /// Opens session `id`'s queue under the state dir `state` in the background and watches
    /// it; wake-ups go to `mailbox`. Call on the runtime's `LocalSet`.
    pub(crate) fn start(
        state: PathBuf,
        id: String,
        mailbox: &UnboundedSender<SessionMsg>,
        shows_notices: bool,
    ) -> Self {
        let weak = mailbox.downgrade();
        let watcher = tokio::task::spawn_local(watch(state, id, weak.clone())).abort_handle();
        Self {
            mailbox: weak,
            shows_notices,
            queue: None,
            claiming: false,
            again: false,
            held: Vec::new(),
            watcher,
        }
    }

    /// The queue came back (opened, or from a claim).
    pub(super) fn put(&mut self, queue: Queue) {
        self.queue = Some(queue);
        self.claiming = false;
    }

    /// Whether a wake-up came while the queue was busy; clears it.
    pub(super) fn take_again(&mut self) -> bool {
        std::mem::take(&mut self.again)
    }

    /// Claims the next message on the blocking pool; the result comes back as
    /// [`SessionMsg::QueueClaimed`]. When the queue is busy (opening, claiming) the wake-up is
    /// remembered instead.
    pub(super) fn claim(&mut self) {
        let Some(mut queue) = self.queue.take() else {
            self.again = true;
            return;
        };
        // Strong for the claim's short life, so its result always finds the mailbox open.
        let Some(mailbox) = self.mailbox.upgrade() else {
            self.queue = Some(queue);
            return;
        };
        self.claiming = true;
        tokio::task::spawn_local(async move {
            let claimed = tokio::task::spawn_blocking(move || {
                let result = queue.claim_next();
                (queue, result)
            })
            .await;
            match claimed {
                Ok((queue, result)) => {
                    if let Err(e) = mailbox.send(SessionMsg::QueueClaimed { queue, result }) {
                        // The session is gone: whatever was claimed waits again.
                        off_thread(move || drop(e.0));
                    }
                }
                Err(e) => tracing::error!("claiming a queued message failed: {e}"),
            }
        });
    }

    /// The session stops: the watcher ends, a claim still running is waited for, and every
    /// message held is released to wait for the session's next opening.
    pub(super) async fn close(mut self, rx: &mut UnboundedReceiver<SessionMsg>) {
        self.watcher.abort();
        let mut held = std::mem::take(&mut self.held);
        while self.claiming {
            match rx.recv().await {
                Some(SessionMsg::QueueClaimed { result, .. }) => {
                    self.claiming = false;
                    match result {
                        Ok(Some(claimed)) => held.push(claimed),
                        Ok(None) => {}
                        Err(e) => tracing::warn!("claiming a queued message failed: {e}"),
                    }
                }
                Some(other) => other.refuse("this session has stopped"),
                None => break,
            }
        }
        if held.is_empty() {
            return;
        }
        let count = held.len();
        let released = tokio::task::spawn_blocking(move || {
            for claimed in held {
                if let Err(e) = claimed.release() {
                    tracing::warn!("could not put a queued message back: {e}");
                }
            }
        })
        .await;
        match released {
            Ok(()) => tracing::debug!(count, "queued messages put back for the next opening"),
            Err(e) => tracing::error!("putting queued messages back failed: {e}"),
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// Settles a delivered message off the runtime thread.
pub(super) fn delivered(claimed: Claimed) {
    off_thread(move || match claimed.done() {
        Ok(()) => {}
        Err(e @ QueueError::ClaimLost { .. }) => {
            tracing::warn!("a delivered queued message was taken back meanwhile and may come again: {e}");
        }
        Err(e) => tracing::warn!("could not remove a delivered queued message: {e}"),
    });
}

/// Runs blocking file work on the blocking pool, without waiting for it.
fn off_thread(work: impl FnOnce() + Send + 'static) {
    drop(tokio::task::spawn_blocking(work));
}

/// Opens the queue (taking back what a dead acplb left claimed), hands it to the actor, then
/// forwards every wake-up of its watcher until the session is gone.
async fn watch(state: PathBuf, id: String, mailbox: WeakUnboundedSender<SessionMsg>) {
    let opened = tokio::task::spawn_blocking(move || open(&state, &id)).await;
    let (queue, mut watcher) = match opened {
        Ok(Ok(opened)) => opened,
        Ok(Err(e)) => {
            tracing::warn!("this session's input queue is not watched: {e}");
            return;
        }
        Err(e) => {
            tracing::error!("opening this session's input queue failed: {e}");
            return;
        }
    };
    let mut msg = SessionMsg::QueueOpened(queue);
    loop {
        let Some(tx) = mailbox.upgrade() else { return };
        if tx.send(msg).is_err() {
            return;
        }
        drop(tx);
        // A wake-up is only a hint to look; what it was does not matter here.
        let _why = watcher.wait().await;
        msg = SessionMsg::QueueWake;
    }
}

/// Blocking: the queue's folder, claims put back, the watcher started.
fn open(state: &std::path::Path, id: &str) -> Result<(Queue, QueueWatcher), QueueError> {
    let queue = Queue::open(state, id)?;
    // A session is open in one acplb at a time (a load refuses one open elsewhere), so a claim
    // found now was left by an acplb that died holding it: it waits again, whatever its age.
    let back = queue.take_back_claims(ABANDONED_TEMP)?;
    if back > 0 {
        tracing::info!(id, back, "queued messages claimed by an earlier acplb wait again");
    }
    let watcher = QueueWatcher::new(queue.dir())?;
    Ok((queue, watcher))
}
