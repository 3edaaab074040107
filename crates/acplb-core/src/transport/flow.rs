//! Backpressure from the client to the provider: how many `session/update` notifications have
//! been handed to the connection but not yet written to the client.
//!
//! The ACP SDK queues outgoing messages without limit, so a client that stops reading would make
//! acplb buffer everything Codex prints. Instead, the session sink counts each update it sends,
//! the stdout writer counts each update it has written, and a provider waits in
//! [`OutputFlow::ready`] while too many are in between. A provider that waits stops reading its
//! child's stdout, and the child blocks on its own pipe: memory stays bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use tokio::sync::Notify;

/// Updates that may be in flight (sent, not yet written) before providers wait.
pub const DEFAULT_UPDATES_IN_FLIGHT: i64 = 128;

/// Shared counters between the session sinks (runtime thread) and the stdout writer.
///
/// The default value never makes anyone wait (in-memory connections in tests, benches).
#[derive(Debug, Clone, Default)]
pub struct OutputFlow {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    limit: i64,
    /// Sent minus written. Signed: a line the writer counts that no sink counted only loosens
    /// the gate a little, it never wedges it.
    in_flight: AtomicI64,
    closed: AtomicBool,
    drained: Notify,
}

impl OutputFlow {
    /// A gate that lets `limit` updates be in flight.
    pub fn bounded(limit: i64) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                limit: limit.max(1),
                in_flight: AtomicI64::new(0),
                closed: AtomicBool::new(false),
                drained: Notify::new(),
            })),
        }
    }

    /// One update was handed to the connection.
    pub fn sent(&self) {
        if let Some(inner) = &self.inner {
            inner.in_flight.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// One update reached the client's pipe.
    pub fn written(&self) {
        if let Some(inner) = &self.inner {
            inner.in_flight.fetch_sub(1, Ordering::AcqRel);
            inner.drained.notify_waiters();
        }
    }

    /// The output is gone (client hung up): nobody waits any more.
    pub fn close(&self) {
        if let Some(inner) = &self.inner {
            inner.closed.store(true, Ordering::Release);
            inner.drained.notify_waiters();
        }
    }

    /// Updates sent but not yet written.
    pub fn in_flight(&self) -> i64 {
        self.inner
            .as_ref()
            .map_or(0, |i| i.in_flight.load(Ordering::Acquire))
    }

    /// Resolves once another update may be sent.
    pub async fn ready(&self) {
        let Some(inner) = &self.inner else { return };
        loop {
            let drained = inner.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a write between the check and the await wakes us.
            drained.as_mut().enable();
            if inner.closed.load(Ordering::Acquire) || inner.in_flight.load(Ordering::Acquire) < inner.limit {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn waits_while_full_and_wakes_on_a_write_from_another_thread() {
        let flow = OutputFlow::bounded(2);
        flow.sent();
        flow.sent();
        let blocked = tokio::time::timeout(Duration::from_millis(50), flow.ready()).await;
        assert!(blocked.is_err(), "two in flight with a limit of two must wait");
        let writer = flow.clone();
        let wait = tokio::spawn({
            let flow = flow.clone();
            async move { flow.ready().await }
        });
        std::thread::spawn(move || writer.written()).join().unwrap();
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("a write wakes the waiter")
            .unwrap();
        assert_eq!(flow.in_flight(), 1);
    }

    #[tokio::test]
    async fn closing_releases_waiters_and_the_default_never_waits() {
        let flow = OutputFlow::bounded(1);
        flow.sent();
        let wait = tokio::spawn({
            let flow = flow.clone();
            async move { flow.ready().await }
        });
        tokio::task::yield_now().await;
        flow.close();
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("close releases the waiter")
            .unwrap();
        let free = OutputFlow::default();
        for _ in 0..1000 {
            free.sent();
        }
        tokio::time::timeout(Duration::from_millis(50), free.ready())
            .await
            .expect("an unbounded flow never waits");
    }
}
