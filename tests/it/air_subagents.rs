//! Subagent sessions in `JetBrains` AIR's shapes (ADR 0055), end to end with the real Codex
//! (multi-agent v2 on) and the mock model: a client that declared AIR's
//! `nativeSubagentSessions` gets each child announced as `subagent_spawned` and ended as
//! `subagent_state_update` on its parent's session, the child's own updates on its thread's
//! id, and a prompt answered only once the children it left working finished, as the TS peer
//! does; a child given more work after its end is a new session (ADR 0057). A client with
//! ACP's subagents gets no such wait: a child still working when the turn ends goes on being
//! shown after the answer, to its end. A load replays the children in the loading client's
//! shapes. exec lists no such capability and keeps the tool calls.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, InitializeRequest, NewSessionRequest, StopReason,
};
use serde_json::{Value, json};

use crate::air_tasks::task_notes;
use crate::harness::prompt;
use crate::live::Live;
use crate::subagent_sessions::{announced, reload_as, states, text_of};
use crate::subagents::{exec_notice_shown, live, on_exec, subagent};

/// AIR's declaration of subagent sessions.
fn native() -> Value {
    json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["nativeSubagentSessions"]}}}})
}

/// AIR's subagent updates `kind` the client got, as `session/update` params.
fn airs(live: &Live, kind: &str) -> Vec<Value> {
    task_notes(live)
        .into_iter()
        .filter(|n| n["update"]["sessionUpdate"] == kind)
        .collect()
}

/// One prompt of `text` by a client that declared `client`: the `initialize` answer, the
/// session's id, the stop reason, and what the client had of the session's updates and AIR's
/// subagent updates when the answer came.
async fn answered(live: &mut Live, client: Value, text: &str) -> (Value, String, StopReason, usize, usize) {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (seen, notes) = (updates.clone(), live.acplb.vendor_notes.clone());
    let client: ClientCapabilities = serde_json::from_value(client).unwrap();
    let text = text.to_owned();
    live.acplb
        .client(&updates, async move |cx| {
            let init = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let stop = prompt(&cx, &s.session_id, &text).await?.stop_reason;
            let (had, airs_had) = (seen.all_with_sessions().len(), notes.lock().unwrap().len());
            Ok((
                serde_json::to_value(init).unwrap(),
                s.session_id.to_string(),
                stop,
                had,
                airs_had,
            ))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

fn lists_native(init: &Value) -> bool {
    let listed = init["_meta"]["jetbrains"]["air"]["capabilities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    listed.iter().any(|c| c == "nativeSubagentSessions")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_gets_each_subagent_as_a_session_in_airs_shapes() {
    let mut live = live();
    let (init, parent, stop, _, _) = answered(&mut live, native(), "scenario:subagent ask a helper").await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    if on_exec() {
        assert!(!lists_native(&init), "exec shows no child's work: {init}");
        assert!(airs(&live, "subagent_spawned").is_empty());
        subagent(&live.updates, "Waiting for subagents");
        assert!(exec_notice_shown(&live.updates));
        return;
    }
    assert!(lists_native(&init), "{init}");
    let spawned = airs(&live, "subagent_spawned");
    assert_eq!(spawned.len(), 1, "{spawned:?}");
    assert_eq!(spawned[0]["sessionId"], parent.as_str());
    let child = spawned[0]["update"]["subagentSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !child.contains(":subagent:"),
        "AIR knows a child by its thread: {child}"
    );
    assert_eq!(
        spawned[0]["update"],
        json!({"sessionUpdate": "subagent_spawned", "subagentSessionId": child, "name": "lister",
            "task": "Delegated task for lister", "capabilities": {}})
    );
    // Announced before any of the child's own updates.
    let first_of_child = all
        .iter()
        .position(|(s, _)| *s == child)
        .expect("the child's updates");
    assert!(spawned[0]["seenAfter"].as_u64().unwrap() <= first_of_child as u64);
    let words = text_of(&all, &child);
    assert!(words.contains("Listing the workspace."), "{words}");
    assert!(
        words.contains("The workspace holds README.md and more."),
        "{words}"
    );
    let ended = airs(&live, "subagent_state_update");
    assert_eq!(
        ended.iter().map(|n| n["update"].clone()).collect::<Vec<_>>(),
        [json!({"sessionUpdate": "subagent_state_update", "subagentSessionId": child, "state": "completed"})]
    );
    // No ACP subagent updates, no tool call for the child, on the parent.
    assert!(
        all.iter().all(|(_, u)| u["sessionUpdate"] != "subagent_update"),
        "{all:?}"
    );
    assert!(text_of(&all, &parent).contains("The helper has finished."));
    // A load replays the child in AIR's shapes too, on the same ids.
    reload_as(&mut live, native(), &parent).await;
    let again = live.updates.all_with_sessions();
    assert!(
        text_of(&again, &child).contains("The workspace holds README.md and more."),
        "{again:?}"
    );
    let spawned = airs(&live, "subagent_spawned");
    assert_eq!(spawned.len(), 1, "{spawned:?}");
    assert_eq!(spawned[0]["update"]["subagentSessionId"], child.as_str());
    let ended = airs(&live, "subagent_state_update");
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0]["update"]["state"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_clients_answer_waits_for_the_subagent_its_turn_left_working() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (_, parent, stop, _, noted) = answered(&mut live, native(), "scenario:subagent_nowait go").await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    assert!(text_of(&all, &parent).contains("I left a helper working."));
    let spawned = airs(&live, "subagent_spawned");
    let child = spawned[0]["update"]["subagentSessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The child finished, and the client heard so, before the prompt's answer.
    assert!(text_of(&all, &child).contains("Napped."), "{all:?}");
    let ended = airs(&live, "subagent_state_update");
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0]["update"]["state"], "completed");
    assert!(noted >= 2, "both AIR updates came before the answer ({noted})");
}

/// An ACP client gets no such wait: the prompt is answered when the parent's turn ends, the
/// child still `running` (with no cancel offered: no turn carries one between turns), and the
/// child's work after the answer still reaches its session, to its `idle` end (as the TS peer
/// goes on showing it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_client_is_answered_when_the_turn_ends_and_sees_its_working_child_finish() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (parent, stop, had) = live
        .acplb
        .client(&updates, async move |cx| {
            let caps: ClientCapabilities = serde_json::from_value(json!({"subagents": {}})).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let stop = prompt(&cx, &s.session_id, "scenario:subagent_nowait go")
                .await?
                .stop_reason;
            let had = seen.all_with_sessions().len();
            // The client stays: the child's news goes on coming.
            let ended = || {
                let all = seen.all_with_sessions();
                announced(&all, &parent).first().is_some_and(|c| {
                    let child = c["sessionId"].as_str().unwrap_or_default();
                    states(&all, &parent, child)
                        .last()
                        .is_some_and(|s| s["state"] == "idle")
                })
            };
            let finished = crate::harness::eventually(std::time::Duration::from_secs(30), ended).await;
            assert!(
                finished,
                "the child's end never came: {:?}",
                seen.all_with_sessions()
            );
            Ok((parent, stop, had))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let at_answer = &all[..had];
    let child = announced(at_answer, &parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        states(at_answer, &parent, &child).last(),
        Some(&json!({"state": "running"})),
        "{at_answer:?}"
    );
    let offered_last = at_answer
        .iter()
        .rfind(|(s, u)| *s == parent && u["sessionId"] == child.as_str() && u.get("state").is_some())
        .map(|(_, u)| u["capabilities"].clone());
    assert_eq!(offered_last, Some(json!({})), "no cancel offered between turns");
    assert!(
        !text_of(at_answer, &child).contains("Napped."),
        "answered before the child finished"
    );
    assert!(text_of(&all, &child).contains("Napped."), "{all:?}");
    assert_eq!(
        states(&all, &parent, &child).last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"}))
    );
    // Its command, run after the answer, shows and ends in its session.
    let slept = all
        .iter()
        .any(|(s, u)| *s == child && u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed");
    assert!(slept, "{all:?}");
}

/// `scenario:subagent_followup`: a child answers, then gets a second task (`followup_task`).
/// AIR took its first end as final, so its second task is a new subagent session,
/// `<thread>:generation:2`, announced and ended on its own, where the child's second answer
/// goes (the TS peer's shape). An ACP client keeps one session through both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_given_more_work_after_its_end_is_its_next_life_for_air() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (_, parent, stop, ..) = answered(&mut live, native(), "scenario:subagent_followup go").await;
    assert_eq!(stop, StopReason::EndTurn);
    let spawned: Vec<String> = airs(&live, "subagent_spawned")
        .iter()
        .map(|n| n["update"]["subagentSessionId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(spawned.len(), 2, "{spawned:?}");
    assert_eq!(spawned[1], format!("{}:generation:2", spawned[0]));
    let ended: Vec<(String, String)> = airs(&live, "subagent_state_update")
        .iter()
        .map(|n| {
            let u = &n["update"];
            (
                u["subagentSessionId"].as_str().unwrap().to_owned(),
                u["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let each_completed: Vec<(String, String)> = spawned
        .iter()
        .map(|id| (id.clone(), "completed".to_owned()))
        .collect();
    assert_eq!(ended, each_completed);
    let all = live.updates.all_with_sessions();
    for id in &spawned {
        assert!(
            text_of(&all, id).contains("Hello! I am the mock model."),
            "{id}: {all:?}"
        );
    }
    assert!(text_of(&all, &parent).contains("The helper did both."));

    let mut live = crate::subagents::live();
    let (_, parent, stop, ..) = answered(
        &mut live,
        json!({"subagents": {}}),
        "scenario:subagent_followup go",
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let children = announced(&all, &parent);
    assert_eq!(children.len(), 1, "{children:?}");
    let child = children[0]["sessionId"].as_str().unwrap();
    let idle = states(&all, &parent, child)
        .iter()
        .filter(|s| s["state"] == "idle")
        .count();
    assert_eq!(idle, 2, "two turns of one session");
}
