//! The threads this process has open, and which to close when there are too many. A session
//! stays open after its call, so `codex-reply` goes on at once; past [`KEEP_OPEN`] the one used
//! least recently (and not in a call) is closed, so memory does not grow with every `codex`
//! call a long-lived server answers. A later `codex-reply` to it loads it again, as a reply from
//! another process does.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

/// How many threads stay open once their calls ended.
pub(crate) const KEEP_OPEN: usize = 8;

/// Open threads: session id → cwd, and their order of last use (oldest first).
#[derive(Debug, Default)]
pub(crate) struct OpenThreads {
    cwd: HashMap<String, PathBuf>,
    order: VecDeque<String>,
}

impl OpenThreads {
    pub(crate) fn len(&self) -> usize {
        self.cwd.len()
    }

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.cwd.contains_key(id)
    }

    /// `id` (in `cwd`) is open and used now.
    pub(crate) fn used(&mut self, id: &str, cwd: PathBuf) {
        self.cwd.insert(id.to_owned(), cwd);
        self.touch(id);
    }

    /// `id` was used now (nothing when it is not open).
    pub(crate) fn touch(&mut self, id: &str) {
        if self.cwd.contains_key(id) {
            self.order.retain(|o| o != id);
            self.order.push_back(id.to_owned());
        }
    }

    pub(crate) fn forget(&mut self, id: &str) {
        self.cwd.remove(id);
        self.order.retain(|o| o != id);
    }

    /// Forgets and returns the least recently used threads past [`KEEP_OPEN`], skipping those
    /// `busy` says are in a call.
    pub(crate) fn surplus(&mut self, busy: impl Fn(&str) -> bool) -> Vec<String> {
        let mut over = self.len().saturating_sub(KEEP_OPEN);
        let mut closing = Vec::new();
        for id in &self.order {
            if over == 0 {
                break;
            }
            if !busy(id) {
                closing.push(id.clone());
                over -= 1;
            }
        }
        for id in &closing {
            self.forget(id);
        }
        closing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_idle_threads_past_the_limit_are_let_go() {
        let mut open = OpenThreads::default();
        for i in 0..KEEP_OPEN + 3 {
            open.used(&format!("t{i}"), PathBuf::from("/w"));
        }
        open.touch("t0");
        // t1 is in a call: t2, t3 and t4 go instead.
        let closing = open.surplus(|id| id == "t1");
        assert_eq!(closing, ["t2", "t3", "t4"]);
        assert_eq!(open.len(), KEEP_OPEN);
        assert!(open.contains("t0") && open.contains("t1") && !open.contains("t2"));
        assert!(open.surplus(|_| false).is_empty(), "nothing past the limit");
    }
}
