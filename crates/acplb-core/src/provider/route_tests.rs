//! A mark names its session until it is taken, keeps the update's own `_meta`, and survives the journal's round trip.

use agent_client_protocol::v1::schema::{
    ContentChunk, SessionInfoUpdate, SessionUpdate, SubagentUpdate, ToolCall, ToolCallUpdate,
    ToolCallUpdateFields,
};
use serde_json::json;

use super::*;

fn text(t: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(t.into()))
}

#[test]
fn a_marked_update_names_its_session_until_the_mark_is_taken() {
    let mut update = text("hi");
    assert!(to(&mut update, "p:subagent:t1"));
    assert_eq!(of(&update), Some("p:subagent:t1"));
    assert!(is_subagents(&update));
    assert_eq!(take(&mut update).as_deref(), Some("p:subagent:t1"));
    // Nothing of the mark is left: the update is as the agent made it.
    assert_eq!(update, text("hi"));
    assert_eq!(take(&mut update), None);
}

#[test]
fn the_mark_keeps_the_updates_own_meta() {
    let mut call = ToolCall::new("c1", "ls");
    call.meta = json!({"k": 1}).as_object().cloned();
    let mut update = SessionUpdate::ToolCall(call);
    assert!(to(&mut update, "s"));
    let wire = serde_json::to_value(&update).unwrap();
    assert_eq!(wire["_meta"], json!({"k": 1, "acplb/session": "s"}));
    assert_eq!(take(&mut update).as_deref(), Some("s"));
    assert_eq!(serde_json::to_value(&update).unwrap()["_meta"], json!({"k": 1}));
}

#[test]
fn kinds_a_child_does_not_send_are_not_marked() {
    let mut update = SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().title("x".to_owned()));
    assert!(!to(&mut update, "s"));
    assert_eq!(of(&update), None);
    assert!(!is_subagents(&update));
}

#[test]
fn a_mark_that_is_no_string_leaves_the_update_the_parents() {
    let mut update = SessionUpdate::ToolCallUpdate(
        ToolCallUpdate::new("c", ToolCallUpdateFields::new()).meta(json!({ROUTE: 7}).as_object().cloned()),
    );
    assert_eq!(of(&update), None);
    assert_eq!(take(&mut update), None);
    assert_eq!(serde_json::to_value(&update).unwrap().get("_meta"), None);
}

#[test]
fn an_announcement_is_of_the_subagents() {
    assert!(is_subagents(&SessionUpdate::SubagentUpdate(SubagentUpdate::new(
        "c"
    ))));
}

#[test]
fn a_journaled_mark_survives_the_round_trip() {
    let mut update = text("from the child");
    assert!(to(&mut update, "p:subagent:t"));
    let back: SessionUpdate = serde_json::from_value(serde_json::to_value(&update).unwrap()).unwrap();
    assert_eq!(of(&back), Some("p:subagent:t"));
}

#[test]
fn a_child_sessions_id_names_its_parent() {
    let id = child_id("sess-1", "0199-thread");
    assert_eq!(parent_of(&id), Some("sess-1"));
    assert_eq!(parent_of("sess-1"), None);
    assert_eq!(parent_of(":subagent:0199"), None, "no parent");
    assert_eq!(parent_of("sess-1:subagent:"), None, "no thread");
}

#[test]
fn a_childs_proposed_plan_is_marked_for_it() {
    use agent_client_protocol::v1::schema::{PlanUpdate, PlanUpdateContent};
    let plan = PlanUpdateContent::markdown("t1-plan".to_owned(), "1. Look\n2. Fix".to_owned());
    let mut update = SessionUpdate::PlanUpdate(PlanUpdate::new(plan));
    assert!(to(&mut update, "p:subagent:t"));
    let back: SessionUpdate = serde_json::from_value(serde_json::to_value(&update).unwrap()).unwrap();
    assert_eq!(of(&back), Some("p:subagent:t"));
    let mut back = back;
    assert_eq!(take(&mut back).as_deref(), Some("p:subagent:t"));
    assert_eq!(serde_json::to_value(&back).unwrap().get("_meta"), None);
}
