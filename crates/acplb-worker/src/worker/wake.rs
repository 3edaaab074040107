//! When to look at the mailbox again: on the files backend when the inbox folder changes (or
//! at the watcher's tick); on the `atm-cli` backend when a poll of `atm list` finds unread
//! mail it has not reported yet (or still finds mail a tick after it last did).

use std::sync::Arc;
use std::time::{Duration, Instant};

use acplb_atm::atm_cli::AtmCli;
use acplb_core::sessions::queue::QueueWatcher;

/// How often the `atm-cli` backend's unread count is polled.
pub(crate) const ATM_POLL: Duration = Duration::from_secs(2);
/// Unread mail that is still there this long after the last wake-up wakes the worker again
/// (the files watcher's tick: a message left unread after an error is retried then).
const REWAKE: Duration = acplb_core::sessions::queue::TICK;

/// What wakes the worker for mail.
pub(crate) enum MailWake {
    /// The inbox folder's watcher.
    Files(QueueWatcher),
    /// Polls of `atm list --json`.
    AtmCli(Poll),
}

/// The `atm-cli` poll's state.
pub(crate) struct Poll {
    cli: Arc<AtmCli>,
    interval: tokio::time::Interval,
    /// The unread count at the last wake-up (or the last poll that found none).
    reported: usize,
    woke_at: Instant,
}

impl MailWake {
    /// Polls `cli` every `every`.
    pub(crate) fn poll(cli: Arc<AtmCli>, every: Duration) -> Self {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        Self::AtmCli(Poll {
            cli,
            interval,
            reported: 0,
            woke_at: Instant::now(),
        })
    }

    /// Returns when the mailbox should be read.
    ///
    /// Cancel-safe: the watcher's wait is; a dropped poll kills its `atm` child
    /// (`kill_on_drop`) and changes no state, so the next call simply polls again.
    pub(crate) async fn wait(&mut self) {
        match self {
            Self::Files(watch) => {
                watch.wait().await;
            }
            Self::AtmCli(poll) => poll.wait().await,
        }
    }
}

impl Poll {
    async fn wait(&mut self) {
        loop {
            self.interval.tick().await;
            // An async child, never a wait on the runtime thread; `atm` is killed at its
            // time limit.
            let count = match self.cli.pending_count_async().await {
                Ok(n) => n,
                Err(e) => {
                    tracing::debug!(error = %e, "cannot count unread mail through atm");
                    continue;
                }
            };
            if self.should_wake(count, Instant::now()) {
                return;
            }
        }
    }

    /// Whether a poll that counted `count` unread messages at `now` wakes the worker.
    fn should_wake(&mut self, count: usize, now: Instant) -> bool {
        if count == 0 {
            self.reported = 0;
            return false;
        }
        if count != self.reported || now.duration_since(self.woke_at) >= REWAKE {
            self.reported = count;
            self.woke_at = now;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll() -> Poll {
        Poll {
            cli: Arc::new(AtmCli::new("bob", "demo")),
            interval: tokio::time::interval(ATM_POLL),
            reported: 0,
            woke_at: Instant::now(),
        }
    }

    #[tokio::test]
    async fn a_poll_wakes_on_new_mail_and_again_only_after_the_tick() {
        let mut p = poll();
        let t0 = Instant::now();
        assert!(!p.should_wake(0, t0), "no mail");
        assert!(p.should_wake(1, t0), "new mail");
        assert!(
            !p.should_wake(1, t0 + ATM_POLL),
            "the same mail, already reported"
        );
        assert!(p.should_wake(2, t0 + ATM_POLL * 2), "more mail");
        assert!(
            p.should_wake(2, t0 + ATM_POLL * 2 + REWAKE),
            "mail still waiting a tick later"
        );
        assert!(!p.should_wake(0, t0 + REWAKE * 2), "all read");
        assert!(
            p.should_wake(2, t0 + REWAKE * 2 + ATM_POLL),
            "new mail after none, even with the same count"
        );
    }
}
