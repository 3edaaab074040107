//! Who spawned whom among a session's subagents: Codex lets a child spawn children of its own,
//! which the session shows beside it (the router sends them all to the root's session). A
//! cancel of one child's work reaches its own children too, as the TS peer's does (ADR 0060).

use super::Subagents;
use super::child::is_open;

impl Subagents {
    /// The children `thread` spawned, theirs, and so on, that still work: each one's thread
    /// and the turn it runs now. A child spawned by two (it cannot be) or by itself is listed
    /// once.
    pub(crate) fn descendants(&self, thread: &str) -> Vec<(String, Option<String>)> {
        let mut found: Vec<&str> = vec![thread];
        let mut at = 0;
        while at < found.len() {
            let spawner = found[at];
            for child in &self.children {
                if child.spawner.as_deref() == Some(spawner) && !found.contains(&child.thread_id.as_str()) {
                    found.push(&child.thread_id);
                }
            }
            at += 1;
        }
        self.children
            .iter()
            .filter(|c| found[1..].contains(&c.thread_id.as_str()) && is_open(c.status))
            .map(|c| (c.thread_id.clone(), c.turn_id.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use acplb_core::capabilities::SubagentSessions;
    use serde_json::{Value, json};

    use super::super::{DecoderOptions, Subagents};

    fn spawn(by: &str, child: &str) -> Value {
        json!({"threadId": by, "turnId": "t", "item": {"type": "collabAgentToolCall", "id": format!("s-{child}"),
            "tool": "spawnAgent", "status": "completed", "prompt": "work", "receiverThreadIds": [child],
            "senderThreadId": by, "agentsStates": {}}})
    }

    fn started(child: &str) -> Value {
        json!({"threadId": child, "turn": {"id": format!("{child}-1")}})
    }

    /// `parent` spawned `a` and `b`; `a` spawned `a1`, which spawned `a2`; all run.
    fn family() -> Subagents {
        let mut s = Subagents::new("parent", DecoderOptions::new("/repo"))
            .with_sessions("S1".into(), Some(SubagentSessions::Acp));
        let mut out = Vec::new();
        for (by, child) in [("parent", "a"), ("parent", "b"), ("a", "a1"), ("a1", "a2")] {
            assert!(s.take("item/completed", &spawn(by, child), &mut out));
            assert!(s.take("turn/started", &started(child), &mut out));
        }
        s
    }

    fn threads(found: Vec<(String, Option<String>)>) -> Vec<String> {
        found.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn a_childs_descendants_are_those_it_spawned_and_theirs_with_their_turns() {
        let s = family();
        let found = s.descendants("a");
        assert_eq!(
            found,
            [
                ("a1".to_owned(), Some("a1-1".to_owned())),
                ("a2".to_owned(), Some("a2-1".to_owned()))
            ]
        );
        assert_eq!(threads(s.descendants("a1")), ["a2"]);
        assert!(s.descendants("b").is_empty(), "a sibling's are not");
        assert!(s.descendants("nobody").is_empty());
    }

    #[test]
    fn a_wait_naming_a_child_does_not_make_it_the_waiters_and_ended_ones_are_left_out() {
        let mut s = family();
        let mut out = Vec::new();
        // `b` waits on `x` before `a` spawns it (a wait, not a spawn): `x` is `a`'s.
        let wait = json!({"threadId": "b", "turnId": "t", "item": {"type": "collabAgentToolCall", "id": "w",
            "tool": "wait", "status": "completed", "receiverThreadIds": ["x"], "senderThreadId": "b",
            "agentsStates": {}}});
        assert!(s.take("item/completed", &wait, &mut out));
        assert!(s.take("item/completed", &spawn("a", "x"), &mut out));
        assert!(s.take("turn/started", &started("x"), &mut out));
        assert!(s.descendants("b").is_empty());
        assert_eq!(threads(s.descendants("a")), ["a1", "a2", "x"]);
        // `a2` ends: it is left out.
        let end = json!({"threadId": "a2", "turn": {"id": "a2-1", "status": "completed"}});
        assert!(s.take("turn/completed", &end, &mut out));
        assert_eq!(threads(s.descendants("a")), ["a1", "x"]);
    }
}
