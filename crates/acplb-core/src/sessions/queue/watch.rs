//! Waking a consumer when its queue folder may hold new messages: file-system events (inotify
//! where the system offers it, else a poll of the folder) and a slow tick in case an event was
//! missed. A wake-up is a hint to call [`Queue::claim_next`](super::Queue::claim_next), never a
//! promise that a message waits.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::{Event, EventKind, RecursiveMode, Watcher as _, event::ModifyKind, event::RenameMode};
use tokio::sync::Notify;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::QueueError;

/// How often the watcher wakes with no event (the "30 s timer").
pub const TICK: Duration = Duration::from_secs(30);

/// How often the folder is polled when file-system events are not available.
pub const POLL: Duration = Duration::from_secs(2);

/// Why [`QueueWatcher::wait`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Something changed in the folder (a file arrived, was released, or events were lost).
    Changed,
    /// The slow tick came round.
    Tick,
}

/// Watches one queue folder (which must exist). Create it inside a tokio runtime (its tick is a
/// tokio timer); the file-system watcher runs on a thread of its own and stops when this is
/// dropped.
pub struct QueueWatcher {
    woken: Arc<Notify>,
    tick: Interval,
    polling: bool,
    _watcher: Box<dyn notify::Watcher + Send>,
}

impl fmt::Debug for QueueWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueWatcher")
            .field("polling", &self.polling)
            .finish_non_exhaustive()
    }
}

impl QueueWatcher {
    /// Watches `dir` with the system's watcher, or by polling every [`POLL`] when that cannot
    /// start (no inotify, its limits reached); ticks every [`TICK`].
    pub fn new(dir: &Path) -> Result<Self, QueueError> {
        Self::start(dir, TICK, None)
    }

    /// As [`QueueWatcher::new`] with a tick of `tick`.
    pub fn with_tick(dir: &Path, tick: Duration) -> Result<Self, QueueError> {
        Self::start(dir, tick, None)
    }

    /// Whether the folder is polled (the system's watcher could not start).
    pub fn is_polling(&self) -> bool {
        self.polling
    }

    /// Waits until the folder may have changed or the tick comes round. Cancellation safe: a
    /// change seen while nobody waits is kept for the next call, and so is a due tick.
    pub async fn wait(&mut self) -> Wake {
        tokio::select! {
            // Cancel-safe: `notify_one`'s permit stays stored until a completed `notified()`
            // takes it, and a dropped, notified waiter hands it back.
            () = self.woken.notified() => Wake::Changed,
            // Cancel-safe: a tick not taken stays due.
            _ = self.tick.tick() => Wake::Tick,
        }
    }

    /// `poll`: `Some(interval)` forces polling (tests); `None` tries the system's watcher first.
    fn start(dir: &Path, tick: Duration, poll: Option<Duration>) -> Result<Self, QueueError> {
        let woken = Arc::new(Notify::new());
        let handler = |woken: Arc<Notify>| {
            move |event: notify::Result<Event>| {
                if may_add_messages(&event) {
                    woken.notify_one();
                }
            }
        };
        let system = match poll {
            Some(_) => None,
            None => match system_watcher(dir, handler(woken.clone())) {
                Ok(w) => Some(w),
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), "no file-system events, polling: {e}");
                    None
                }
            },
        };
        let polling = system.is_none();
        let watcher = if let Some(w) = system {
            w
        } else {
            poll_watcher(dir, handler(woken.clone()), poll.unwrap_or(POLL)).map_err(|source| {
                QueueError::Watch {
                    path: dir.to_owned(),
                    source,
                }
            })?
        };
        let mut tick = tokio::time::interval_at(Instant::now() + tick, tick);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Ok(Self {
            woken,
            tick,
            polling,
            _watcher: watcher,
        })
    }
}

fn system_watcher(
    dir: &Path,
    handler: impl notify::EventHandler,
) -> notify::Result<Box<dyn notify::Watcher + Send>> {
    let mut w = notify::recommended_watcher(handler)?;
    w.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(Box::new(w))
}

fn poll_watcher(
    dir: &Path,
    handler: impl notify::EventHandler,
    every: Duration,
) -> notify::Result<Box<dyn notify::Watcher + Send>> {
    let config = notify::Config::default().with_poll_interval(every);
    let mut w = notify::PollWatcher::new(handler, config)?;
    w.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(Box::new(w))
}

/// Whether an event may mean a message is waiting: a `.json` file appeared or changed (a send,
/// a release, a stale claim taken back), or the watcher lost track (an error, a rescan).
/// Reads, removals and renames away from `.json` (claims) add nothing.
fn may_add_messages(event: &notify::Result<Event>) -> bool {
    let Ok(event) = event else {
        return true;
    };
    if event.need_rescan() {
        return true;
    }
    let kind_may = !matches!(
        event.kind,
        EventKind::Access(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From))
    );
    let json = |p: &std::path::PathBuf| p.extension().is_some_and(|e| e == "json");
    let paths_may = match event.kind {
        // `[from, to]`: only where it went matters.
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => event.paths.last().is_some_and(json),
        _ => event.paths.is_empty() || event.paths.iter().any(json),
    };
    kind_may && paths_may
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::queue::{queue_dir, send};

    /// Generous: a loaded CI machine may be slow to deliver an event, never this slow.
    const PATIENCE: Duration = Duration::from_secs(10);

    async fn wakes_on_a_send(poll: Option<Duration>) {
        let state = tempfile::tempdir().unwrap();
        let dir = queue_dir(state.path(), "bob@core");
        crate::sessions::state::create_private_dir(&dir).unwrap();
        let mut w = QueueWatcher::start(&dir, TICK, poll).unwrap();
        assert_eq!(w.is_polling(), poll.is_some());
        send(state.path(), "bob@core", None, "hello").unwrap();
        let woke = tokio::time::timeout(PATIENCE, w.wait()).await;
        assert_eq!(woke, Ok(Wake::Changed));
    }

    #[tokio::test]
    async fn a_dropped_file_wakes_the_watcher() {
        wakes_on_a_send(None).await;
    }

    #[tokio::test]
    async fn a_dropped_file_wakes_the_polling_watcher() {
        wakes_on_a_send(Some(Duration::from_millis(100))).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_folder_still_ticks() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = QueueWatcher::start(dir.path(), TICK, None).unwrap();
        let start = Instant::now();
        assert_eq!(w.wait().await, Wake::Tick);
        assert!(start.elapsed() >= TICK);
    }

    #[test]
    fn claims_and_reads_do_not_wake() {
        use notify::event::{AccessKind, CreateKind, RemoveKind};
        let ev = |kind, paths: &[&str]| {
            Ok(Event {
                kind,
                paths: paths.iter().map(Into::into).collect(),
                attrs: notify::event::EventAttributes::default(),
            })
        };
        let both = EventKind::Modify(ModifyKind::Name(RenameMode::Both));
        assert!(may_add_messages(&ev(both, &["/q/.tmp-a", "/q/a.json"])));
        assert!(may_add_messages(&ev(both, &["/q/a.claimed", "/q/a.json"])));
        assert!(!may_add_messages(&ev(both, &["/q/a.json", "/q/a.claimed"])));
        let to = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        assert!(may_add_messages(&ev(to, &["/q/a.json"])));
        assert!(may_add_messages(&ev(
            EventKind::Create(CreateKind::File),
            &["/q/a.json"]
        )));
        assert!(!may_add_messages(&ev(
            EventKind::Create(CreateKind::File),
            &["/q/.tmp-a"]
        )));
        assert!(!may_add_messages(&ev(
            EventKind::Remove(RemoveKind::File),
            &["/q/a.json"]
        )));
        assert!(!may_add_messages(&ev(
            EventKind::Access(AccessKind::Any),
            &["/q/a.json"]
        )));
        assert!(may_add_messages(&Err(notify::Error::generic("lost"))));
    }
}
