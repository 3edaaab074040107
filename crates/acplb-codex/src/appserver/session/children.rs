//! What a turn does to its subagents beyond showing them. A turn whose children outlive it, for
//! a client that takes them in `JetBrains` AIR's shapes (ADR 0055): as the TS peer does, the
//! prompt is answered once the children finished (their ends are what the editor waits for),
//! for at most `CodexOptions::subagent_wait` (ten minutes); children still working then are
//! stopped and given up as failed. Other clients get their answer when the parent's turn ends.
//! And the editor's cancel of one child's work, the parent going on (ADR 0056).

use tokio::time::Instant;

use super::turn::{Ended, PendingAsk, TurnRun};
use super::{FuturesUnordered, SessionSink, TurnEnd};
use crate::appserver::subagents;

impl TurnRun<'_> {
    /// The parent's turn completed (`end`): whether its answer waits for the children still
    /// working.
    pub(super) fn waits_for_children(&mut self, end: &TurnEnd) -> bool {
        if *end != TurnEnd::Completed || self.stopping || !self.subagents.waits() || !self.subagents.working()
        {
            return false;
        }
        tracing::debug!("the turn ended with its subagents working: its answer waits for them");
        self.held_end = Some(end.clone());
        self.children_by = Some(Instant::now() + self.children_wait);
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

    /// The wait ran out: the children still working are stopped (what they asked answered
    /// "cancel", their turns interrupted, their commands swept) and shown as given up.
    pub(super) async fn children_outlasted(
        &mut self,
        asks: FuturesUnordered<PendingAsk<'_>>,
        sink: &dyn SessionSink,
    ) -> Ended {
        tracing::warn!(
            "subagents still worked when their wait ran out; they are stopped and the turn answered"
        );
        drop(asks);
        for (id, cancelled) in std::mem::take(&mut self.waiting) {
            self.respond(&id, cancelled);
        }
        subagents::stop(self.rpc, self.marker, self.subagents.threads()).await;
        self.subagents
            .close_open("Still working when acplb stopped waiting for it.", &mut self.out);
        self.children_by = None;
        self.flush(sink);
        Ended::Turn(self.held_end.take().unwrap_or(TurnEnd::Completed))
    }

    /// The editor cancelled the subagent session `child` (ADR 0056): what it asks the editor
    /// stops waiting (ended as cancelled), its running turn is interrupted (its session then
    /// shows it `idle`/`cancelled`) and its commands are swept, and so for the children it
    /// spawned that still work, theirs, and so on (ADR 0060); the parent's turn goes on. A
    /// child with no turn running, or not of this turn, has nothing to cancel.
    pub(super) fn cancel_child(&mut self, child: &str) {
        let Some((thread, turn)) = self.subagents.cancellable(child) else {
            tracing::debug!(%child, "cancel of a subagent with no turn running; nothing to stop");
            return;
        };
        let mut stopping = vec![(thread.clone(), Some(turn))];
        stopping.extend(self.subagents.descendants(&thread));
        for (thread, _) in &stopping {
            for (_, asker, stop) in &self.child_asks {
                if asker == thread {
                    stop.abort();
                }
            }
            for open in self.subagents.withdraw_asks(thread, &mut self.out) {
                self.respond(&open.id, open.ask.cancelled());
            }
        }
        // Beside the turn, which goes on taking Codex's messages and the editor's cancel.
        let (rpc, marker) = (std::rc::Rc::clone(self.rpc), self.marker.to_owned());
        tokio::task::spawn_local(async move { subagents::stop(&rpc, &marker, stopping).await });
    }
}
