//! Stderr that never holds the runtime up: log lines go through a bounded queue to a thread of
//! their own, which is the only one to write (and so to wait) when the reader of stderr is slow
//! or has stopped reading. A full queue drops lines and counts them; the thread says how many
//! once stderr takes lines again. Stdout is never touched.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

/// Lines waiting for stderr at most; more are dropped.
const QUEUE: usize = 4096;

/// How long the last lines get to reach stderr when acplb exits.
const FLUSH_AT_EXIT: Duration = Duration::from_millis(500);

/// The writing end: cheap to clone, one per log event; a write never blocks.
#[derive(Debug, Clone)]
pub(super) struct StderrLines {
    tx: SyncSender<Vec<u8>>,
    dropped: Arc<AtomicU64>,
}

impl std::io::Write for StderrLines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Disconnected: the writer thread is gone (acplb is exiting); nothing to write to.
        if let Err(TrySendError::Full(_)) = self.tx.try_send(buf.to_vec()) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Waits (briefly) for the queued lines to be written when dropped.
#[derive(Debug)]
pub(super) struct StderrGuard {
    tx: SyncSender<Vec<u8>>,
    done: Receiver<()>,
}

impl Drop for StderrGuard {
    fn drop(&mut self) {
        // An empty line marks the end: once the thread reaches it, every line before it is out.
        if self.tx.try_send(Vec::new()).is_ok() {
            self.done.recv_timeout(FLUSH_AT_EXIT).ok();
        }
    }
}

/// Starts the writer thread; without one (it could not start), logs go nowhere rather than
/// block.
pub(super) fn start() -> (StderrLines, Option<StderrGuard>) {
    let (tx, rx) = sync_channel::<Vec<u8>>(QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    let (done_tx, done) = sync_channel(1);
    let counted = dropped.clone();
    let spawned = std::thread::Builder::new()
        .name("acplb-stderr".into())
        .spawn(move || write_lines(&rx, &counted, &done_tx));
    let guard = spawned.ok().map(|_| StderrGuard { tx: tx.clone(), done });
    (StderrLines { tx, dropped }, guard)
}

fn write_lines(rx: &Receiver<Vec<u8>>, dropped: &AtomicU64, done: &SyncSender<()>) {
    let mut stderr = std::io::stderr();
    while let Ok(line) = rx.recv() {
        if line.is_empty() {
            done.try_send(()).ok();
            continue;
        }
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            let note = format!("acplb: {lost} log lines were dropped while stderr was not being read\n");
            stderr.write_all(note.as_bytes()).ok();
        }
        // A closed stderr loses the line; the queue keeps draining so writers never fill it.
        stderr.write_all(&line).ok();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let (tx, rx) = sync_channel::<Vec<u8>>(2);
        let mut lines = StderrLines {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        for _ in 0..5 {
            assert_eq!(lines.write(b"line\n").unwrap(), 5);
        }
        assert_eq!(lines.dropped.load(Ordering::Relaxed), 3);
        assert_eq!(rx.try_iter().count(), 2);
    }
}
