//! Registry writes off the runtime thread: a [`RegistryWriter`] owns a [`Registry`] on a
//! thread of its own and applies the changes sent to it, in order.
//!
//! [`RegistryWriter::send`] never blocks (the queue is unbounded; a change is small and the
//! runtime sends a few per turn). The thread takes every change waiting at once and writes each
//! registry file once for the lot, so a burst costs one lock and one rename per file. A failed
//! write is logged with `tracing` and the changes after it go on; the writer never panics.
//! [`RegistryWriter::flush`] resolves once every change sent before it is on disk (or has
//! failed), which is how acplb waits for the registry before it exits without blocking its
//! runtime thread. The thread ends when the last clone of the writer is dropped, after writing
//! what was sent; nothing waits for it then, so flush first.

use std::collections::HashMap;
use std::future::Future;
use std::sync::mpsc;
use std::time::SystemTime;

use super::entry::{Entry, Status, timestamp};
use super::error::RegistryError;
use super::{Registry, apply};

/// One change to one session's entry.
#[derive(Debug)]
pub struct Change {
    /// The registry file ([`super::registry_key`]).
    pub key: String,
    /// The session.
    pub session_id: String,
    /// What to do.
    pub op: Op,
}

impl Change {
    /// A change of `session_id`'s entry in the file of `key`.
    pub fn new(key: impl Into<String>, session_id: impl Into<String>, op: Op) -> Change {
        Change {
            key: key.into(),
            session_id: session_id.into(),
            op,
        }
    }

    /// Writes `entry` whole, in the file of its own key ([`Entry::key`]).
    pub fn upsert(entry: Entry) -> Change {
        Change::new(entry.key(), entry.session_id.clone(), Op::Upsert(Box::new(entry)))
    }
}

/// What a [`Change`] does. Every operation but `Upsert` leaves a missing entry missing.
#[non_exhaustive]
pub enum Op {
    /// Creates or replaces the entry.
    Upsert(Box<Entry>),
    /// Sets the status.
    Status(Status),
    /// Sets the provider's thread id.
    ThreadId(String),
    /// Sets or clears the title.
    Title(Option<String>),
    /// Sets `lastActive` to this time (take it when the activity happens, not when it is
    /// written).
    Touch(SystemTime),
    /// Removes the entry.
    Remove,
    /// Any other edit. It may run more than once (when a write is retried), so it must set
    /// values rather than accumulate them.
    Edit(Box<dyn FnMut(&mut Entry) + Send>),
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Upsert(e) => f.debug_tuple("Upsert").field(e).finish(),
            Op::Status(s) => f.debug_tuple("Status").field(s).finish(),
            Op::ThreadId(t) => f.debug_tuple("ThreadId").field(t).finish(),
            Op::Title(t) => f.debug_tuple("Title").field(t).finish(),
            Op::Touch(t) => f.debug_tuple("Touch").field(t).finish(),
            Op::Remove => f.write_str("Remove"),
            Op::Edit(_) => f.write_str("Edit(..)"),
        }
    }
}

impl Op {
    /// The entry after this operation.
    fn run(&mut self, old: Option<Entry>) -> Option<Entry> {
        if let Op::Upsert(entry) = self {
            return Some((**entry).clone());
        }
        let mut e = old?;
        match self {
            Op::Upsert(_) => {}
            Op::Status(s) => e.status = *s,
            Op::ThreadId(t) => e.thread_id = Some(t.clone()),
            Op::Title(t) => e.title.clone_from(t),
            Op::Touch(at) => e.last_active = timestamp(*at),
            Op::Remove => return None,
            Op::Edit(edit) => edit(&mut e),
        }
        Some(e)
    }
}

enum Msg {
    Change(Change),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The registry's writer thread. Cloning gives another handle to the same thread.
#[derive(Clone)]
pub struct RegistryWriter {
    tx: mpsc::Sender<Msg>,
}

impl std::fmt::Debug for RegistryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryWriter").finish_non_exhaustive()
    }
}

impl RegistryWriter {
    /// Starts the thread (named `acplb-registry`) that writes to `registry`.
    pub fn start(registry: Registry) -> Result<RegistryWriter, RegistryError> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("acplb-registry".into())
            .spawn(move || run(&registry, &rx))
            .map_err(RegistryError::Thread)?;
        Ok(RegistryWriter { tx })
    }

    /// Queues `change`; never blocks. Changes are applied in the order they are sent.
    pub fn send(&self, change: Change) {
        if self.tx.send(Msg::Change(change)).is_err() {
            // The thread only ends once every handle is gone, so this cannot happen; say so
            // if it does.
            tracing::warn!("registry writer thread is gone; change dropped");
        }
    }

    /// A future that resolves once everything sent before this call is written (or failed).
    /// The flush is queued when this is called, not when the future is first polled.
    pub fn flush(&self) -> impl Future<Output = ()> + Send + 'static {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let queued = self.tx.send(Msg::Flush(tx)).is_ok();
        async move {
            if queued {
                // An error means the thread is gone: nothing is left to wait for.
                rx.await.ok();
            }
        }
    }

    /// Like [`RegistryWriter::flush`], blocking the calling thread (never call it on an async
    /// runtime's thread).
    pub fn flush_blocking(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.tx.send(Msg::Flush(tx)).is_ok() {
            rx.blocking_recv().ok();
        }
    }
}

/// The thread: waits for a message, takes every one queued behind it, writes, answers flushes.
fn run(registry: &Registry, rx: &mpsc::Receiver<Msg>) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter().take(MAX_BATCH));
        let mut flushes = Vec::new();
        let mut by_key: Vec<(String, Vec<(String, Op)>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for msg in batch {
            match msg {
                Msg::Flush(done) => flushes.push(done),
                Msg::Change(c) => {
                    let i = *index.entry(c.key.clone()).or_insert_with(|| {
                        by_key.push((c.key, Vec::new()));
                        by_key.len() - 1
                    });
                    by_key[i].1.push((c.session_id, c.op));
                }
            }
        }
        for (key, mut ops) in by_key {
            write(registry, &key, &mut ops);
        }
        for done in flushes {
            // The flusher may have stopped waiting; that is fine.
            done.send(()).ok();
        }
    }
}

/// The most messages taken in one batch (beyond the first).
const MAX_BATCH: usize = 1024;

/// Applies one file's changes, in order, in one write.
fn write(registry: &Registry, key: &str, ops: &mut [(String, Op)]) {
    let result = registry.modify(key, |sessions| {
        let mut changed = false;
        for (id, op) in ops.iter_mut() {
            changed |= apply(sessions, id, &mut |old| op.run(old));
        }
        changed
    });
    match result {
        Ok(wrote) => tracing::debug!(key, changes = ops.len(), wrote, "registry written"),
        Err(e) => {
            tracing::warn!(key, changes = ops.len(), error = %chain(&e), "registry write failed");
        }
    }
}

/// An error with its causes, `a: b: c`.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
