//! Followers come off a tool call update in order, leaving the rest of its `_meta`; malformed ones are dropped.

use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallUpdate, ToolCallUpdateFields};
use serde_json::{Map, Value, json};

use super::{FOLLOWERS, follow, take};

#[test]
fn followers_come_off_in_order_and_leave_the_rest_of_the_meta() {
    let mut meta = Map::new();
    meta.insert("kept".into(), json!(1));
    let mut update = ToolCallUpdate::new("t1", ToolCallUpdateFields::new()).meta(meta);
    follow(&mut update, json!({"sessionUpdate": "first"}));
    follow(&mut update, json!({"sessionUpdate": "second", "n": 2}));
    let mut update = SessionUpdate::ToolCallUpdate(update);
    let taken = take(&mut update);
    let kinds: Vec<_> = taken.iter().map(|f| f["sessionUpdate"].clone()).collect();
    assert_eq!(kinds, [json!("first"), json!("second")]);
    let left = serde_json::to_value(&update).unwrap();
    assert_eq!(left["_meta"], json!({"kept": 1}), "{left}");
    assert!(take(&mut update).is_empty(), "taken once");
}

#[test]
fn an_update_left_with_no_meta_has_none_and_malformed_followers_are_dropped() {
    let mut update = ToolCallUpdate::new("t1", ToolCallUpdateFields::new());
    follow(&mut update, json!({"sessionUpdate": "kept"}));
    if let Some(Value::Array(list)) = update.meta.as_mut().and_then(|m| m.get_mut(FOLLOWERS)) {
        list.push(json!("not an object"));
        list.push(json!({"no": "kind"}));
    }
    let mut update = SessionUpdate::ToolCallUpdate(update);
    assert_eq!(take(&mut update).len(), 1);
    let left = serde_json::to_value(&update).unwrap();
    assert!(left.get("_meta").is_none(), "{left}");
}

#[test]
fn other_updates_carry_none() {
    let mut update =
        SessionUpdate::AgentMessageChunk(agent_client_protocol::v1::schema::ContentChunk::new("hi".into()));
    assert!(take(&mut update).is_empty());
}
