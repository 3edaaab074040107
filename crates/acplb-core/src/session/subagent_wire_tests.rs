//! Each update's wire form: a child's to its session (AIR's by its thread), announcements and ends in ACP's or AIR's kinds.

use agent_client_protocol::v1::schema::{
    ContentChunk, ErrorStopReason, IdleStateUpdate, IdleStopReason, RunningStateUpdate, SessionId,
    SessionUpdate, StateUpdate, SubagentSessionCapabilities, SubagentUpdate, UnknownStateUpdate,
};
use serde_json::{Value, json};

use super::*;

const CHILD: &str = "S:subagent:th-1";

fn parent() -> SessionId {
    SessionId::new("S")
}

/// The session and update of what `wire` gives, as JSON (`None` for nothing).
fn sent(update: SessionUpdate, air: bool) -> Option<(String, Value)> {
    match wire(&parent(), update, air) {
        Wire::Typed(n) => Some((n.session_id.to_string(), serde_json::to_value(&n.update).unwrap())),
        Wire::Untyped(m) => {
            let params = serde_json::to_value(&m).unwrap()["params"].clone();
            Some((
                params["sessionId"].as_str().unwrap().to_owned(),
                params["update"].clone(),
            ))
        }
        Wire::Nothing => None,
    }
}

fn announced() -> SessionUpdate {
    SessionUpdate::SubagentUpdate(
        SubagentUpdate::new(CHILD)
            .title("lister".to_owned())
            .capabilities(SubagentSessionCapabilities::new()),
    )
}

fn state(state: StateUpdate) -> SessionUpdate {
    SessionUpdate::SubagentUpdate(SubagentUpdate::new(CHILD).state(state))
}

fn childs_words() -> SessionUpdate {
    let mut update = SessionUpdate::AgentMessageChunk(ContentChunk::new("hi".into()));
    assert!(route::to(&mut update, CHILD));
    update
}

#[test]
fn a_childs_update_goes_to_its_session_by_its_id_or_for_air_its_threads() {
    let (to, update) = sent(childs_words(), false).unwrap();
    assert_eq!(to, CHILD);
    assert_eq!(update.get("_meta"), None, "the mark is off: {update}");
    assert_eq!(sent(childs_words(), true).unwrap().0, "th-1");
}

#[test]
fn an_announcement_is_a_subagent_update_or_airs_spawn() {
    let (to, update) = sent(announced(), false).unwrap();
    assert_eq!(to, "S");
    assert_eq!(update["sessionUpdate"], "subagent_update");
    let (to, update) = sent(announced(), true).unwrap();
    assert_eq!(to, "S");
    assert_eq!(
        update,
        json!({"sessionUpdate": "subagent_spawned", "subagentSessionId": "th-1", "name": "lister",
            "task": "Delegated task for lister", "capabilities": {}})
    );
}

#[test]
fn air_gets_ends_only_in_its_words() {
    let cases = [
        (StateUpdate::Running(RunningStateUpdate::new()), None),
        (
            StateUpdate::Idle(IdleStateUpdate::new().stop_reason(IdleStopReason::EndTurn)),
            Some("completed"),
        ),
        (
            StateUpdate::Idle(IdleStateUpdate::new().stop_reason(IdleStopReason::Cancelled)),
            Some("cancelled"),
        ),
        (
            StateUpdate::Idle(
                IdleStateUpdate::new().stop_reason(IdleStopReason::from(ErrorStopReason::new())),
            ),
            Some("failed"),
        ),
        (StateUpdate::Unknown(UnknownStateUpdate::new()), Some("failed")),
    ];
    for (s, air) in cases {
        let standard = sent(state(s.clone()), false).unwrap();
        assert_eq!(standard.1["sessionUpdate"], "subagent_update");
        match (sent(state(s), true), air) {
            (None, None) => {}
            (Some((to, update)), Some(air)) => {
                assert_eq!(to, "S");
                assert_eq!(
                    update,
                    json!({"sessionUpdate": "subagent_state_update", "subagentSessionId": "th-1", "state": air})
                );
            }
            (got, want) => panic!("{got:?} for {want:?}"),
        }
    }
    // A new title is nothing AIR shows.
    let retitled = SessionUpdate::SubagentUpdate(SubagentUpdate::new(CHILD).title("t".to_owned()));
    assert!(sent(retitled, true).is_none());
}

#[test]
fn the_parents_own_updates_are_untouched() {
    let update = SessionUpdate::AgentMessageChunk(ContentChunk::new("mine".into()));
    for air in [false, true] {
        let (to, json) = sent(update.clone(), air).unwrap();
        assert_eq!(to, "S");
        assert_eq!(json["content"]["text"], "mine");
    }
}

#[test]
fn a_permission_ask_of_a_child_is_addressed_as_the_client_knows_it() {
    assert_eq!(addressee(CHILD, false), CHILD);
    assert_eq!(addressee(CHILD, true), "th-1");
    assert_eq!(addressee("no-child-mark", true), "no-child-mark");
}
