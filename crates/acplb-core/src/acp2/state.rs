//! What the v2 face knows of each session it set up (ADR 0048): the message ids its chunks
//! got, and its foreground state (v2's `state_update`): `running` while a prompt's turn runs,
//! `requires_action` while that turn waits on the user, `idle` with the stop reason after.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::updates::Ids;

/// One session on the face.
#[derive(Debug, Default)]
pub(super) struct Session {
    /// The ids given to chunks that came without one.
    pub(super) ids: Ids,
    /// Prompts whose turns have not ended.
    prompts: usize,
    /// Permission requests and questions the client has not answered.
    asks: usize,
}

/// Every session the face set up on this connection.
#[derive(Debug, Default)]
pub(super) struct Sessions(HashMap<String, Session>);

impl Sessions {
    /// Notes a session set up (new, fork, resume) on this connection.
    pub(super) fn opened(&mut self, id: &str) {
        self.0.entry(id.to_owned()).or_default();
    }

    /// Forgets a closed or deleted session.
    pub(super) fn closed(&mut self, id: &str) {
        self.0.remove(id);
    }

    /// Whether the session was set up on this connection.
    pub(super) fn knows(&self, id: &str) -> bool {
        self.0.contains_key(id)
    }

    /// The session `id`, noted now if it was not (updates can precede the setup's answer).
    pub(super) fn get(&mut self, id: &str) -> &mut Session {
        self.0.entry(id.to_owned()).or_default()
    }

    /// A prompt's turn starts: `running` if it is the only one.
    pub(super) fn prompt_started(&mut self, id: &str) -> Option<Value> {
        let s = self.get(id);
        s.prompts += 1;
        (s.prompts == 1).then(|| json!({"state": "running"}))
    }

    /// A prompt's turn ended with `stop` (v2's idle fields): `idle` once no other runs.
    pub(super) fn prompt_ended(&mut self, id: &str, stop: Value) -> Option<Value> {
        let s = self.get(id);
        s.prompts = s.prompts.saturating_sub(1);
        if s.prompts > 0 {
            return None;
        }
        s.asks = 0;
        let mut idle = json!({"state": "idle"});
        if let (Some(idle), Value::Object(stop)) = (idle.as_object_mut(), stop) {
            idle.extend(stop);
        }
        Some(idle)
    }

    /// The client was asked something: `requires_action` if a turn now waits on it.
    pub(super) fn asked(&mut self, id: &str) -> Option<Value> {
        let s = self.get(id);
        s.asks += 1;
        (s.prompts > 0 && s.asks == 1).then(|| json!({"state": "requires_action"}))
    }

    /// The client answered: `running` again if the turn waits on nothing else.
    pub(super) fn answered(&mut self, id: &str) -> Option<Value> {
        let s = self.get(id);
        s.asks = s.asks.saturating_sub(1);
        (s.prompts > 0 && s.asks == 0).then(|| json!({"state": "running"}))
    }

    /// The state as it is now (the snapshot a resume sends before its answer).
    pub(super) fn snapshot(&mut self, id: &str) -> Value {
        let s = self.get(id);
        match (s.prompts, s.asks) {
            (0, _) => json!({"state": "idle"}),
            (_, 0) => json!({"state": "running"}),
            _ => json!({"state": "requires_action"}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_runs_waits_on_the_user_and_ends_idle() {
        let mut s = Sessions::default();
        assert_eq!(s.prompt_started("a"), Some(json!({"state": "running"})));
        assert_eq!(
            s.prompt_started("a"),
            None,
            "a second prompt joins the running turn"
        );
        assert_eq!(s.asked("a"), Some(json!({"state": "requires_action"})));
        assert_eq!(s.asked("a"), None);
        assert_eq!(s.answered("a"), None);
        assert_eq!(s.snapshot("a"), json!({"state": "requires_action"}));
        assert_eq!(s.answered("a"), Some(json!({"state": "running"})));
        assert_eq!(s.prompt_ended("a", json!({"stopReason": "end_turn"})), None);
        assert_eq!(
            s.prompt_ended("a", json!({"stopReason": "end_turn"})),
            Some(json!({"state": "idle", "stopReason": "end_turn"}))
        );
        assert_eq!(s.asked("a"), None, "an idle session is not blocked by a question");
    }
}
