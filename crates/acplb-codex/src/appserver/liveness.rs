//! Whether the shared server still answers: the time limit of each request to it, the clock
//! those limits run on (stopped while acplb itself holds the server back, the editor being
//! behind), and the watch that asks a silent server something while turns wait on it.

use std::cell::Cell;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::protocol::requests::ThreadLoadedList;
use super::rpc::Rpc;

/// How long Codex may take to answer `initialize`.
const INITIALIZE: Duration = Duration::from_secs(30);
/// How long Codex may take to answer any other request (`thread/start`, `turn/start`, ...).
const REQUEST: Duration = Duration::from_secs(60);
/// How long the server has to answer the worker's health check.
const HEALTH: Duration = Duration::from_secs(10);

/// The time limits on requests to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) initialize: Duration,
    pub(crate) request: Duration,
    pub(crate) health: Duration,
}

impl Limits {
    /// The defaults, or `every` for each (a test's short limit).
    pub(crate) fn new(every: Option<Duration>) -> Self {
        Self {
            initialize: every.unwrap_or(INITIALIZE),
            request: every.unwrap_or(REQUEST),
            health: every.unwrap_or(HEALTH),
        }
    }
}

/// How long acplb has held the server back (not read its output) so far; a request's limit
/// counts only the rest, the time in which its answer could have been read.
#[derive(Debug, Default)]
pub(crate) struct ReadClock {
    held: Cell<Duration>,
    since: Cell<Option<Instant>>,
}

/// The server is held back until this is dropped.
#[derive(Debug)]
pub(crate) struct Hold<'a>(&'a ReadClock);

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        if let Some(since) = self.0.since.take() {
            self.0.held.set(self.0.held.get() + since.elapsed());
        }
    }
}

impl ReadClock {
    /// The reader holds the server back until the guard is dropped.
    pub(crate) fn hold(&self) -> Hold<'_> {
        if self.since.get().is_none() {
            self.since.set(Some(Instant::now()));
        }
        Hold(self)
    }

    fn held_for(&self) -> Duration {
        self.held.get() + self.since.get().map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// `answer`'s output, or `None` when it did not come within `limit`, not counting the time
    /// the server was held back meanwhile.
    pub(crate) async fn within<F: Future>(&self, limit: Duration, answer: F) -> Option<F::Output> {
        tokio::pin!(answer);
        let mut spent = Duration::ZERO;
        while let Some(left) = limit.checked_sub(spent).filter(|d| !d.is_zero()) {
            let (held, started) = (self.held_for(), Instant::now());
            if let Ok(out) = tokio::time::timeout(left, &mut answer).await {
                return Some(out);
            }
            let holding = self.held_for().saturating_sub(held);
            spent += started.elapsed().saturating_sub(holding);
        }
        None
    }
}

/// While a turn runs on the server and nothing has come from it for `limit`, asks it something
/// cheap (`thread/loaded/list`) within `limit`; one that does not answer is declared dead, and
/// every turn waiting on it hears so. Ends when the server is gone.
pub(crate) async fn watch(rpc: std::rc::Rc<Rpc>, limit: Duration) {
    loop {
        tokio::time::sleep(limit).await;
        if rpc.gone().is_some() {
            return;
        }
        if rpc.turn_running() && rpc.quiet_for() >= limit {
            // An error answer is an answer too: only silence counts.
            let _answer = rpc
                .request_within(&ThreadLoadedList {}, limit, "a health check")
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_limit_counts_only_time_the_server_was_not_held_back() {
        let clock = ReadClock::default();
        let never = std::future::pending::<()>();
        let at = Instant::now();
        assert!(clock.within(Duration::from_millis(50), never).await.is_none());
        assert!(at.elapsed() >= Duration::from_millis(50));

        // Held back for 120 ms of a 50 ms limit: the answer at 150 ms still counts.
        let at = Instant::now();
        let hold = clock.hold();
        let release = async {
            tokio::time::sleep(Duration::from_millis(120)).await;
            drop(hold);
        };
        let late = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            7
        };
        let (answer, ()) = tokio::join!(clock.within(Duration::from_millis(50), late), release);
        assert_eq!(answer, Some(7));
        assert!(at.elapsed() >= Duration::from_millis(150));
    }

    #[test]
    fn one_setting_replaces_every_default() {
        assert_eq!(Limits::new(None).initialize, Duration::from_secs(30));
        assert_eq!(Limits::new(None).request, Duration::from_secs(60));
        let short = Limits::new(Some(Duration::from_millis(1500)));
        assert_eq!(
            (short.initialize, short.request, short.health),
            (
                Duration::from_millis(1500),
                Duration::from_millis(1500),
                Duration::from_millis(1500)
            )
        );
    }
}
