//! The children a session's earlier turns announced as sessions, remembered across its turns
//! (ADR 0055), each as the life of it the editor last saw. A client in `JetBrains` AIR's
//! shapes takes a child's end as final: a child it was told ended that then starts a turn again
//! (given more work) is announced anew as `<thread>:generation:<n>`, the TS peer's shape, and
//! its news goes there.

use agent_client_protocol::v1::schema::SessionUpdate;

use super::child::Child;
use super::{ANNOUNCED_KEPT, Subagents, sessions};
use acplb_core::provider::route;

use route::GENERATION;

/// What a child's session id holds after `<parent>:subagent:`: its thread, and from its second
/// life on the number of that life.
pub(super) fn life(thread: &str, generation: u32) -> String {
    if generation <= 1 {
        thread.to_owned()
    } else {
        format!("{thread}{GENERATION}{generation}")
    }
}

/// The thread and the number of a life as [`life`] wrote it (a bad number counts as the first).
fn parse(life: &str) -> (&str, u32) {
    match life.rsplit_once(GENERATION) {
        Some((thread, n)) => (thread, n.parse().unwrap_or(1)),
        None => (life, 1),
    }
}

impl Subagents {
    /// Knows the children earlier turns announced (`lives`, as [`Subagents::announced`] gave
    /// them): they are not announced again, and keep the life they were in.
    #[must_use]
    pub(crate) fn knowing(mut self, lives: Vec<String>) -> Self {
        self.known = lives;
        self
    }

    /// The children announced as sessions so far, this turn's with the earlier ones, each as
    /// its latest life (the latest [`ANNOUNCED_KEPT`]).
    pub(crate) fn announced(&self) -> Vec<String> {
        let mut all = self.known.clone();
        for child in self.children.iter().filter(|c| c.session.is_some()) {
            all.retain(|known| parse(known).0 != child.thread_id);
            all.push(life(&child.thread_id, child.generation));
        }
        let over = all.len().saturating_sub(ANNOUNCED_KEPT);
        all.drain(..over);
        all
    }

    /// The life an earlier turn left the child on `thread` in, if one announced it.
    pub(super) fn known_generation(&self, thread: &str) -> Option<u32> {
        self.known
            .iter()
            .map(|known| parse(known))
            .find(|(t, _)| *t == thread)
            .map(|(_, generation)| generation)
    }

    /// For an AIR client, the next life of a child shown ended that starts a turn again:
    /// announced as its own session, where the child's news goes from now on.
    pub(super) fn renew(air_parent: Option<&str>, child: &mut Child, out: &mut Vec<SessionUpdate>) {
        let Some(parent) = air_parent.filter(|_| child.ended_shown && child.session.is_some()) else {
            return;
        };
        child.generation += 1;
        let id = route::child_id(parent, &life(&child.thread_id, child.generation));
        out.push(sessions::announced(
            &id,
            child.task.as_deref(),
            child.description.as_deref(),
        ));
        child.session = Some(id);
        child.ended_shown = false;
    }
}
