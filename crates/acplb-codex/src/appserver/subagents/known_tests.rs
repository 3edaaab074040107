//! Unit tests of what a session remembers of its children across turns: for an AIR client, a
//! child shown ended that starts a turn again is announced anew as its next life, in the same
//! turn or a later one; an ACP client keeps one session per child.

use acplb_core::capabilities::SubagentSessions;
use acplb_core::provider::route;
use agent_client_protocol::v1::schema::SessionUpdate;
use serde_json::{Value, json};

use super::known::life;
use super::{DecoderOptions, Subagents};

fn view(how: SubagentSessions, known: Vec<String>) -> Subagents {
    let mut options = DecoderOptions::new("/repo");
    options.id_prefix = "t1-".into();
    Subagents::new("parent", options)
        .with_sessions("S1".into(), Some(how))
        .knowing(known)
}

fn spawn(s: &mut Subagents, out: &mut Vec<SessionUpdate>) {
    let params = json!({"threadId": "parent", "turnId": "p1", "item": {"type": "collabAgentToolCall",
        "id": "call_1", "tool": "spawnAgent", "status": "completed", "prompt": "nap",
        "receiverThreadIds": ["c"], "senderThreadId": "parent", "agentsStates": {}}});
    assert!(s.take("item/completed", &params, out));
}

/// One turn of child `c` (`turn`): started, a message, completed.
fn child_turn(s: &mut Subagents, turn: &str, out: &mut Vec<SessionUpdate>) {
    let of = |extra: Value| {
        let mut p = json!({"threadId": "c", "turnId": turn});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };
    assert!(s.take("turn/started", &of(json!({"turn": {"id": turn}})), out));
    let said = json!({"item": {"type": "agentMessage", "id": format!("m-{turn}"), "text": "done"}});
    assert!(s.take("item/completed", &of(said), out));
    let end = json!({"turn": {"id": turn, "status": "completed"}});
    assert!(s.take("turn/completed", &of(end), out));
}

/// The ids announced (a `subagent_update` with a title), in order.
fn announcements(out: &[SessionUpdate]) -> Vec<String> {
    out.iter()
        .map(|u| serde_json::to_value(u).unwrap())
        .filter(|u| u["sessionUpdate"] == "subagent_update" && u.get("title").is_some())
        .map(|u| u["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

/// The sessions the child's own updates (marked) went to, without repeats.
fn marked(out: &[SessionUpdate]) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for to in out.iter().filter_map(route::of) {
        if all.last().is_none_or(|last| last != to) {
            all.push(to.to_owned());
        }
    }
    all
}

#[test]
fn an_air_child_given_work_after_its_end_is_announced_as_its_next_life() {
    let mut s = view(SubagentSessions::Air, Vec::new());
    let mut out = Vec::new();
    spawn(&mut s, &mut out);
    child_turn(&mut s, "c1", &mut out);
    child_turn(&mut s, "c2", &mut out);
    assert_eq!(
        announcements(&out),
        ["S1:subagent:c", "S1:subagent:c:generation:2"]
    );
    assert_eq!(marked(&out), ["S1:subagent:c", "S1:subagent:c:generation:2"]);
    // Its second life's announcement keeps its title and task.
    let second = serde_json::to_value(
        out.iter()
            .rfind(|u| {
                matches!(u, SessionUpdate::SubagentUpdate(_)
        if serde_json::to_value(u).unwrap().get("title").is_some())
            })
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (second["title"].as_str(), second["description"].as_str()),
        (Some("nap"), Some("nap"))
    );
    assert_eq!(s.announced(), ["c:generation:2"]);
}

#[test]
fn a_later_turn_goes_on_in_the_life_it_was_left_in_and_the_next_is_counted_on() {
    let mut s = view(SubagentSessions::Air, vec!["c:generation:2".into(), "d".into()]);
    let mut out = Vec::new();
    spawn(&mut s, &mut out);
    assert!(announcements(&out).is_empty(), "known: not announced again");
    child_turn(&mut s, "c3", &mut out);
    assert_eq!(announcements(&out), ["S1:subagent:c:generation:3"]);
    assert_eq!(s.announced(), ["d", "c:generation:3"]);
}

#[test]
fn an_acp_child_keeps_one_session_through_its_turns() {
    let mut s = view(SubagentSessions::Acp, Vec::new());
    let mut out = Vec::new();
    spawn(&mut s, &mut out);
    child_turn(&mut s, "c1", &mut out);
    child_turn(&mut s, "c2", &mut out);
    assert_eq!(announcements(&out), ["S1:subagent:c"]);
    assert_eq!(marked(&out), ["S1:subagent:c"]);
    assert_eq!(s.announced(), ["c"]);
}

#[test]
fn a_life_is_its_thread_then_numbered() {
    assert_eq!(life("c", 1), "c");
    assert_eq!(life("c", 2), "c:generation:2");
}
