//! A turn whose subagents outlive it, for a client that takes them in `JetBrains` AIR's shapes
//! (ADR 0055): as the TS peer does, the prompt is answered once the children finished (their
//! ends are what the editor waits for), for at most [`CHILDREN_WAIT`]; children still working
//! then are given up as failed. Other clients get their answer when the parent's turn ends.

use std::time::Duration;

use tokio::time::Instant;

use super::turn::{Ended, TurnRun};
use super::{SessionSink, TurnEnd};

/// How long a completed turn waits for its subagents (the peer's ten minutes).
const CHILDREN_WAIT: Duration = Duration::from_secs(600);

impl TurnRun<'_> {
    /// The parent's turn completed (`end`): whether its answer waits for the children still
    /// working.
    pub(super) fn waits_for_children(&mut self, end: &TurnEnd) -> bool {
        if *end != TurnEnd::Completed || !self.subagents.waits() || !self.subagents.working() {
            return false;
        }
        tracing::debug!("the turn ended with its subagents working: its answer waits for them");
        self.held_end = Some(end.clone());
        self.children_by = Some(Instant::now() + CHILDREN_WAIT);
        true
    }

    /// The turn's end, once the children it waited for finished.
    pub(super) fn children_done(&mut self) -> Option<TurnEnd> {
        if self.held_end.is_none() || self.subagents.working() {
            return None;
        }
        self.children_by = None;
        self.held_end.take()
    }

    /// The wait ran out: the children still working are given up.
    pub(super) fn children_outlasted(&mut self, sink: &dyn SessionSink) -> Ended {
        tracing::warn!("subagents still worked when their wait ran out; the turn is answered without them");
        self.subagents
            .close_open("Still working when acplb stopped waiting for it.", &mut self.out);
        self.children_by = None;
        self.flush(sink);
        Ended::Turn(self.held_end.take().unwrap_or(TurnEnd::Completed))
    }
}
