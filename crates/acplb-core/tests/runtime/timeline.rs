//! The one ordered record both sides of a test write to: provider entries start with
//! `provider`, editor entries with `client`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// How long anything a test waits for may take. The tests run on tokio's paused clock, so a
/// wait that would never end fails at once instead of after this long.
pub const LIMIT: Duration = Duration::from_secs(1);

/// Everything that happened, in order.
#[derive(Clone)]
pub struct Timeline(Arc<watch::Sender<Vec<String>>>);

impl Default for Timeline {
    fn default() -> Self {
        Self(Arc::new(watch::channel(Vec::new()).0))
    }
}

impl Timeline {
    pub fn push(&self, entry: impl Into<String>) {
        let entry = entry.into();
        self.0.send_modify(|all| all.push(entry));
    }

    pub fn entries(&self) -> Vec<String> {
        self.0.borrow().clone()
    }

    /// The entries that start with `prefix` (`provider `, `client update:`), in order.
    pub fn of(&self, prefix: &str) -> Vec<String> {
        self.entries()
            .into_iter()
            .filter(|e| e.starts_with(prefix))
            .collect()
    }

    pub fn has(&self, entry: &str) -> bool {
        self.0.borrow().iter().any(|e| e == entry)
    }

    /// Position of `entry`; fails the test when it never happened.
    pub fn position(&self, entry: &str) -> usize {
        self.0
            .borrow()
            .iter()
            .position(|e| e == entry)
            .unwrap_or_else(|| panic!("`{entry}` never happened; the timeline: {:#?}", self.entries()))
    }

    /// Waits until `entry` happened (at most [`LIMIT`]).
    pub async fn wait_for(&self, entry: &str) {
        self.wait_until(entry, |e| e == entry).await;
    }

    /// Waits until an entry starting with `prefix` happened (at most [`LIMIT`]).
    pub async fn wait_for_prefix(&self, prefix: &str) {
        self.wait_until(prefix, |e| e.starts_with(prefix)).await;
    }

    async fn wait_until(&self, what: &str, matches: impl Fn(&str) -> bool) {
        let mut rx = self.0.subscribe();
        let found = tokio::time::timeout(LIMIT, rx.wait_for(|all| all.iter().any(|e| matches(e)))).await;
        assert!(
            matches!(found, Ok(Ok(_))),
            "`{what}` did not happen within {LIMIT:?}; the timeline: {:#?}",
            self.entries()
        );
    }
}

/// `what`, which must be done within [`LIMIT`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, future)
        .await
        .unwrap_or_else(|_elapsed| panic!("{what} took longer than {LIMIT:?}"))
}
