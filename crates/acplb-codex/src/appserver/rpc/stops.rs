//! The background commands the user asked Codex to stop (`/terminals stop`,
//! `_session/async_task/stop`), by Codex's item id, until their end arrives: a `JetBrains` AIR
//! client is told such a task ended `stopped`, not `failed` (ADR 0051).

use std::cell::RefCell;
use std::collections::HashSet;

/// At most this many stops wait for their end; past it the list starts again (an end that
/// never came must not grow it forever).
const MAX: usize = 256;

/// Item ids of commands being stopped; one per server connection, shared by its sessions.
#[derive(Debug, Default)]
pub(crate) struct Stops(RefCell<HashSet<String>>);

impl Stops {
    /// The user asks to stop the command of item `item` (noted before Codex is asked, so its
    /// end cannot arrive first).
    pub(crate) fn note(&self, item: &str) {
        let mut items = self.0.borrow_mut();
        if items.len() >= MAX {
            items.clear();
        }
        items.insert(item.to_owned());
    }

    /// Codex did not stop it after all.
    pub(crate) fn forget(&self, item: &str) {
        self.0.borrow_mut().remove(item);
    }

    /// Whether the command of `item` (which just ended) was being stopped; forgets it.
    pub(crate) fn take(&self, item: &str) -> bool {
        self.0.borrow_mut().remove(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_taken_once_and_a_forgotten_one_not_at_all() {
        let stops = Stops::default();
        stops.note("a");
        stops.note("b");
        stops.forget("b");
        assert!(stops.take("a"));
        assert!(!stops.take("a"), "taken once");
        assert!(!stops.take("b"), "forgotten");
    }

    #[test]
    fn too_many_waiting_stops_start_the_list_again() {
        let stops = Stops::default();
        for i in 0..MAX {
            stops.note(&i.to_string());
        }
        stops.note("last");
        assert!(stops.take("last"));
        assert!(!stops.take("0"));
    }
}
