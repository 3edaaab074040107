//! The background commands the user asked Codex to stop (`/terminals stop`,
//! `_session/async_task/stop`), by thread and Codex's item id (item ids are the model's call
//! ids, which two threads may share), until their end arrives: a `JetBrains` AIR client is
//! told such a task ended `stopped`, not `failed` (ADR 0051).

use std::cell::RefCell;
use std::collections::HashSet;

/// At most this many stops wait for their end; past it the list starts again (an end that
/// never came must not grow it forever).
const MAX: usize = 256;

/// `(thread id, item id)` of commands being stopped; one per server connection, shared by
/// its sessions.
#[derive(Debug, Default)]
pub(crate) struct Stops(RefCell<HashSet<(String, String)>>);

impl Stops {
    /// The user asks to stop the command of item `item` of `thread` (noted before Codex is
    /// asked, so its end cannot arrive first); `false` when a stop of it was noted already
    /// (then only that stop may [`Stops::forget`] it).
    pub(crate) fn note(&self, thread: &str, item: &str) -> bool {
        let mut items = self.0.borrow_mut();
        if items.len() >= MAX {
            items.clear();
        }
        items.insert((thread.to_owned(), item.to_owned()))
    }

    /// Codex did not stop it after all.
    pub(crate) fn forget(&self, thread: &str, item: &str) {
        self.0.borrow_mut().remove(&(thread.to_owned(), item.to_owned()));
    }

    /// Whether the command of item `item` of `thread` (which just ended) was being stopped;
    /// forgets it.
    pub(crate) fn take(&self, thread: &str, item: &str) -> bool {
        self.0.borrow_mut().remove(&(thread.to_owned(), item.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_taken_once_and_a_forgotten_one_not_at_all() {
        let stops = Stops::default();
        assert!(stops.note("t", "a"));
        assert!(!stops.note("t", "a"), "a second stop of it");
        stops.note("t", "b");
        stops.forget("t", "b");
        assert!(
            !stops.take("other thread", "a"),
            "another thread's item of the same id"
        );
        assert!(stops.take("t", "a"));
        assert!(!stops.take("t", "a"), "taken once");
        assert!(!stops.take("t", "b"), "forgotten");
    }

    #[test]
    fn too_many_waiting_stops_start_the_list_again() {
        let stops = Stops::default();
        for i in 0..MAX {
            stops.note("t", &i.to_string());
        }
        stops.note("t", "last");
        assert!(stops.take("t", "last"));
        assert!(!stops.take("t", "0"));
    }
}
