//! In-process tests of the worker loop, with a stand-in host (no Codex): mail routed by
//! policy, a crash restarted with a doubling pause, a reload applied as a diff, a stop while
//! a turn runs.

mod lifecycle;
mod routing;
mod stand_in;

use std::time::Duration;

/// Runs `test` on a `LocalSet` (workers are `!Send`).
fn local<F: Future<Output = ()>>(test: F) -> impl Future<Output = ()> {
    let set = tokio::task::LocalSet::new();
    async move { set.run_until(test).await }
}

/// Waits (tokio's clock) until `done` holds, checking every 10 ms; fails the test with
/// `what` after `PATIENCE`.
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

const PATIENCE: Duration = Duration::from_secs(20);
