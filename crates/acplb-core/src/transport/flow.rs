//! Backpressure from the client to the provider: how many `session/update` notifications and
//! `session/request_permission` requests, and how many bytes of them, have been handed to the
//! connection but not yet written to the client.
//!
//! The ACP SDK queues outgoing messages without limit, so a client that stops reading would make
//! acplb buffer everything Codex prints. Instead, the session sink counts each message it sends
//! (and its size), the stdout writer counts each one it has written, and a provider waits in
//! [`OutputFlow::ready`] while too many messages, or too many bytes, are in between. A provider
//! that waits stops reading its child's stdout, and the child blocks on its own pipe: memory
//! stays bounded by the byte limit plus one message, however large Codex's messages are.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use tokio::sync::Notify;

/// Messages that may be in flight (sent, not yet written) before providers wait.
pub const DEFAULT_UPDATES_IN_FLIGHT: i64 = 128;

/// Bytes of messages that may be in flight before providers wait.
pub const DEFAULT_BYTES_IN_FLIGHT: i64 = 64 * 1024 * 1024;

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
    byte_limit: i64,
    /// Sent minus written. Signed: a line the writer counts that no sink counted only loosens
    /// the gate a little, it never wedges it.
    in_flight: AtomicI64,
    /// Bytes sent minus bytes written. The sink's size is the message's JSON and the writer's
    /// the whole line, so the two differ by the envelope; set back to zero whenever nothing is
    /// in flight, so that difference never adds up.
    bytes: AtomicI64,
    closed: AtomicBool,
    drained: Notify,
}

impl OutputFlow {
    /// A gate that lets `limit` messages, and `byte_limit` bytes of them, be in flight.
    pub fn bounded(limit: i64, byte_limit: i64) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                limit: limit.max(1),
                byte_limit: byte_limit.max(1),
                in_flight: AtomicI64::new(0),
                bytes: AtomicI64::new(0),
                closed: AtomicBool::new(false),
                drained: Notify::new(),
            })),
        }
    }

    /// One message of `bytes` bytes is about to be handed to the connection.
    pub fn sent(&self, bytes: usize) {
        if let Some(inner) = &self.inner {
            inner.bytes.fetch_add(to_i64(bytes), Ordering::AcqRel);
            inner.in_flight.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// A message handed over as [`OutputFlow::sent`] never left (the connection was closed).
    pub fn unsent(&self, bytes: usize) {
        self.written(1, bytes);
    }

    /// `count` messages, `bytes` bytes in all, reached the client's pipe.
    pub fn written(&self, count: usize, bytes: usize) {
        if let Some(inner) = &self.inner {
            let count = to_i64(count);
            let left = inner.in_flight.fetch_sub(count, Ordering::AcqRel) - count;
            if left <= 0 {
                inner.bytes.store(0, Ordering::Release);
            } else {
                inner.bytes.fetch_sub(to_i64(bytes), Ordering::AcqRel);
            }
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

    /// Messages sent but not yet written.
    pub fn in_flight(&self) -> i64 {
        self.inner
            .as_ref()
            .map_or(0, |i| i.in_flight.load(Ordering::Acquire))
    }

    /// Bytes of messages sent but not yet written (roughly: the sink counts a message's JSON,
    /// the writer its whole line; back to zero whenever nothing is in flight).
    pub fn bytes_in_flight(&self) -> i64 {
        self.inner.as_ref().map_or(0, |i| i.bytes.load(Ordering::Acquire))
    }

    /// Resolves once another message may be sent.
    pub async fn ready(&self) {
        let Some(inner) = &self.inner else { return };
        loop {
            let drained = inner.drained.notified();
            tokio::pin!(drained);
            // Registered before the check, so a write between the check and the await wakes us.
            drained.as_mut().enable();
            if inner.closed.load(Ordering::Acquire)
                || (inner.in_flight.load(Ordering::Acquire) < inner.limit
                    && inner.bytes.load(Ordering::Acquire) < inner.byte_limit)
            {
                return;
            }
            drained.await;
        }
    }
}

/// The size of `value` as JSON, without building the text.
pub fn json_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing into a counter fails only if serializing does; the message then fails to send too.
    if serde_json::to_writer(&mut count, value).is_err() {
        return 0;
    }
    count.0
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn waits_while_full_and_wakes_on_a_write_from_another_thread() {
        let flow = OutputFlow::bounded(2, 1 << 20);
        flow.sent(10);
        flow.sent(10);
        let blocked = tokio::time::timeout(Duration::from_millis(50), flow.ready()).await;
        assert!(blocked.is_err(), "two in flight with a limit of two must wait");
        let writer = flow.clone();
        let wait = tokio::spawn({
            let flow = flow.clone();
            async move { flow.ready().await }
        });
        std::thread::spawn(move || writer.written(1, 10)).join().unwrap();
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("a write wakes the waiter")
            .unwrap();
        assert_eq!(flow.in_flight(), 1);
    }

    #[tokio::test]
    async fn closing_releases_waiters_and_the_default_never_waits() {
        let flow = OutputFlow::bounded(1, 1 << 20);
        flow.sent(10);
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
            free.sent(1 << 20);
        }
        tokio::time::timeout(Duration::from_millis(50), free.ready())
            .await
            .expect("an unbounded flow never waits");
    }

    #[tokio::test]
    async fn bytes_in_flight_close_the_gate_before_the_count_does() {
        let flow = OutputFlow::bounded(128, 100);
        flow.sent(60);
        tokio::time::timeout(Duration::from_millis(50), flow.ready())
            .await
            .expect("60 of 100 bytes: room for more");
        flow.sent(60);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), flow.ready())
                .await
                .is_err(),
            "two messages but 120 bytes in flight with a limit of 100 must wait"
        );
        flow.written(1, 70);
        tokio::time::timeout(Duration::from_millis(50), flow.ready())
            .await
            .expect("one written: under the byte limit again");
        flow.written(1, 70);
        assert_eq!(
            (flow.in_flight(), flow.bytes_in_flight()),
            (0, 0),
            "nothing in flight: the envelope's difference does not add up"
        );
    }
}
