//! What the v2 face knows of each session it set up (ADR 0048): the message ids its chunks
//! got, and its foreground state (v2's `state_update`): `running` while a prompt's turn runs,
//! `requires_action` while that turn waits on the user, `idle` with the stop reason after.
//! Terminals still running when a turn ends (Codex's background terminals) are the session's
//! background work: once there was any, every state lists what still runs
//! (`background: [{type: "terminal", terminalId}]`, `[]` when nothing does), and an idle
//! session whose background terminal exits gets its `idle` again without it.

use std::collections::{BTreeSet, HashMap};

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
    /// Terminals the client was shown that have not exited.
    live: BTreeSet<String>,
    /// Those of them that outlived their turn.
    background: BTreeSet<String>,
    /// Whether background work was ever reported: from then on every state carries it.
    reports: bool,
}

impl Session {
    /// `state` with the background work, where the session reports it.
    fn with_background(&self, mut state: Value) -> Value {
        if self.reports {
            let work: Vec<Value> = self
                .background
                .iter()
                .map(|id| json!({"type": "terminal", "terminalId": id}))
                .collect();
            state["background"] = Value::Array(work);
        }
        state
    }

    /// The foreground state now.
    fn now(&self) -> Value {
        let state = match (self.prompts, self.asks) {
            (0, _) => json!({"state": "idle"}),
            (_, 0) => json!({"state": "running"}),
            _ => json!({"state": "requires_action"}),
        };
        self.with_background(state)
    }
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
        (s.prompts == 1).then(|| s.now())
    }

    /// A prompt's turn ended with `stop` (v2's idle fields): `idle` once no other runs, with
    /// the terminals still running as background work.
    pub(super) fn prompt_ended(&mut self, id: &str, stop: Value) -> Option<Value> {
        let s = self.get(id);
        s.prompts = s.prompts.saturating_sub(1);
        if s.prompts > 0 {
            return None;
        }
        s.asks = 0;
        if !s.live.is_empty() {
            s.background.extend(s.live.iter().cloned());
            s.reports = true;
        }
        let mut idle = s.now();
        if let (Some(idle), Value::Object(stop)) = (idle.as_object_mut(), stop) {
            idle.extend(stop);
        }
        Some(idle)
    }

    /// The client was asked something: `requires_action` if a turn now waits on it.
    pub(super) fn asked(&mut self, id: &str) -> Option<Value> {
        let s = self.get(id);
        s.asks += 1;
        (s.prompts > 0 && s.asks == 1).then(|| s.now())
    }

    /// The client answered: `running` again if the turn waits on nothing else.
    pub(super) fn answered(&mut self, id: &str) -> Option<Value> {
        let s = self.get(id);
        s.asks = s.asks.saturating_sub(1);
        (s.prompts > 0 && s.asks == 0).then(|| s.now())
    }

    /// The state as it is now (the snapshot a resume sends before its answer).
    pub(super) fn snapshot(&mut self, id: &str) -> Value {
        self.get(id).now()
    }

    /// The client was sent `update` (a v2 update) of session `id`: a terminal starts or exits.
    /// The state again when a background terminal exited while no turn runs (it is listed no
    /// more), else `None`.
    pub(super) fn sent(&mut self, id: &str, update: &Value) -> Option<Value> {
        if update["sessionUpdate"] != "terminal_update" {
            return None;
        }
        let terminal = update["terminalId"].as_str()?;
        let s = self.get(id);
        if update.get("exitStatus").is_none_or(Value::is_null) {
            s.live.insert(terminal.to_owned());
            return None;
        }
        s.live.remove(terminal);
        (s.background.remove(terminal) && s.prompts == 0).then(|| s.now())
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

    #[test]
    fn a_terminal_that_outlives_its_turn_is_background_work_until_it_exits() {
        let mut s = Sessions::default();
        let started =
            |id: &str| json!({"sessionUpdate": "terminal_update", "terminalId": id, "command": "x"});
        let exited = |id: &str| json!({"sessionUpdate": "terminal_update", "terminalId": id, "exitStatus": {"exitCode": 0}});
        s.prompt_started("a");
        assert_eq!(s.sent("a", &started("t1")), None);
        assert_eq!(s.sent("a", &started("t2")), None);
        assert_eq!(
            s.sent("a", &exited("t2")),
            None,
            "a foreground terminal ends in its turn"
        );
        let idle = s.prompt_ended("a", json!({"stopReason": "end_turn"})).unwrap();
        assert_eq!(
            idle["background"],
            json!([{"type": "terminal", "terminalId": "t1"}])
        );
        assert_eq!(
            s.prompt_started("a"),
            Some(json!({"state": "running", "background": [{"type": "terminal", "terminalId": "t1"}]}))
        );
        s.prompt_ended("a", json!({}));
        assert_eq!(
            s.sent("a", &exited("t1")),
            Some(json!({"state": "idle", "background": []})),
            "an exit between turns is a new snapshot, and the session keeps reporting"
        );
        assert_eq!(s.sent("a", &exited("t1")), None, "once");
        assert_eq!(s.snapshot("a"), json!({"state": "idle", "background": []}));
    }

    #[test]
    fn a_session_that_never_had_background_work_reports_none() {
        let mut s = Sessions::default();
        s.prompt_started("a");
        let started = json!({"sessionUpdate": "terminal_update", "terminalId": "t", "command": "x"});
        s.sent("a", &started);
        let exit =
            json!({"sessionUpdate": "terminal_update", "terminalId": "t", "exitStatus": {"exitCode": 1}});
        s.sent("a", &exit);
        assert_eq!(
            s.prompt_ended("a", json!({"stopReason": "end_turn"})),
            Some(json!({"state": "idle", "stopReason": "end_turn"}))
        );
    }
}
