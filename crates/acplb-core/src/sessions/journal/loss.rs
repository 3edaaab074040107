//! What a journal does when a record cannot be written (a full disk, say): it keeps its file
//! and tries again with the next record; the records lost meanwhile are counted, and marked
//! with one `lost` record once a write works again; its session hears when records start being
//! lost and when they stop, to tell the editor's user.

use std::cell::{Cell, RefCell};
use std::fmt;

/// What a journal tells its session about its writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalNews {
    /// Records are being lost from now on; the journal tries again with each new one.
    Failing {
        /// Why the first one was lost.
        error: String,
    },
    /// Writing works again; this many records were lost (a `lost` record marks where).
    Recovered {
        /// How many.
        lost: u64,
    },
}

/// Who hears a journal's news (the session, which tells the editor).
pub type Listener = Box<dyn Fn(&JournalNews) + Send>;

/// The records a journal lost, and who hears about it.
#[derive(Default)]
pub(super) struct Loss {
    /// Records lost since the last one written.
    pending: Cell<u64>,
    /// The first error since the last record written.
    error: RefCell<Option<String>>,
    /// Every record lost or left out since the journal was opened.
    total: Cell<u64>,
    /// The file may end in part of a line: a write failed midway and could not be cut off, or
    /// an earlier acplb was killed while writing it.
    pub(super) torn: Cell<bool>,
    listener: RefCell<Option<Listener>>,
    /// The latest news, while nobody listens yet.
    unheard: RefCell<Option<JournalNews>>,
}

impl fmt::Debug for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loss")
            .field("pending", &self.pending.get())
            .field("total", &self.total.get())
            .field("torn", &self.torn.get())
            .finish_non_exhaustive()
    }
}

impl Loss {
    /// Records lost since the last one written and why, to mark them; `None` when none were.
    pub(super) fn pending(&self) -> Option<(u64, String)> {
        let count = self.pending.get();
        (count > 0).then(|| (count, self.error.borrow().clone().unwrap_or_default()))
    }

    /// Every record lost or left out so far.
    pub(super) fn total(&self) -> u64 {
        self.total.get()
    }

    /// A record could not be written; news when it is the first since the last one written.
    pub(super) fn failed(&self, error: &std::io::Error) -> Option<JournalNews> {
        self.total.set(self.total.get() + 1);
        let first = self.pending.replace(self.pending.get() + 1) == 0;
        if !first {
            return None;
        }
        let error = error.to_string();
        *self.error.borrow_mut() = Some(error.clone());
        Some(JournalNews::Failing { error })
    }

    /// A record was left out on purpose (too large), marked where it was.
    pub(super) fn left_out(&self) {
        self.total.set(self.total.get() + 1);
    }

    /// A record was written (with the mark of those lost before it); news when some were.
    pub(super) fn written(&self) -> Option<JournalNews> {
        let lost = self.pending.replace(0);
        self.error.borrow_mut().take();
        (lost > 0).then_some(JournalNews::Recovered { lost })
    }

    /// Hands `news` to the listener, or keeps it for the one to come.
    pub(super) fn tell(&self, news: JournalNews) {
        match self.listener.borrow().as_ref() {
            Some(listen) => listen(&news),
            None => *self.unheard.borrow_mut() = Some(news),
        }
    }

    /// From now on `listener` hears the news, beginning with any it missed.
    pub(super) fn listen(&self, listener: Listener) {
        if let Some(news) = self.unheard.borrow_mut().take() {
            listener(&news);
        }
        *self.listener.borrow_mut() = Some(listener);
    }
}
