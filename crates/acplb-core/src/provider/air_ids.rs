//! The ids an AIR client was told its subagents by (ADR 0055). A child's first life is its bare
//! Codex thread id, which looks like any session's: the runtime remembers the ones it sent, so
//! a request naming one is told that it names a subagent's session, not an unknown one.

use std::sync::{LazyLock, Mutex, PoisonError};

use crate::recent::Recent;

/// How many ids are remembered; past it the oldest are forgotten (a request naming one gets
/// the plain unknown-session answer).
const KEPT: usize = 4096;

/// Every AIR connection of this process shares it (ids are Codex thread ids: unique).
static SHOWN: LazyLock<Mutex<Recent<String>>> = LazyLock::new(|| Mutex::new(Recent::new(KEPT)));

/// `id` was sent to an AIR client as a subagent's session.
pub fn shown(id: &str) {
    SHOWN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id.to_owned());
}

/// Whether `id` was sent to an AIR client as a subagent's session.
#[must_use]
pub fn was_shown(id: &str) -> bool {
    SHOWN.lock().unwrap_or_else(PoisonError::into_inner).contains(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_sent_is_known_and_the_oldest_is_forgotten_past_the_limit() {
        let id = |n: usize| format!("air-ids-test-{n}");
        assert!(!was_shown(&id(0)));
        shown(&id(0));
        shown(&id(0));
        assert!(was_shown(&id(0)));
        for n in 1..=KEPT {
            shown(&id(n));
        }
        // (Other tests may add ids meanwhile: they only make the oldest go sooner.)
        assert!(!was_shown(&id(0)), "the oldest is forgotten");
        assert!(was_shown(&id(KEPT)), "the newest is kept");
    }
}
