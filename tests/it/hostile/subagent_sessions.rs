//! Subagent sessions (ADR 0055) that go wrong, with the real Codex and the mock model on
//! app-server: a capability that is not an object keeps the tool calls; a child whose model
//! fails ends idle with Codex's error; the editor prompting or loading a child's session is
//! told why it cannot (AIR's bare thread id of a child's first life too), and the parent goes on; a cancel while a child works ends it cancelled,
//! at once, in ACP's shapes and in AIR's; Codex killed while a child works leaves it `unknown`.

use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, InitializeRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, SessionId, StopReason,
};
use serde_json::json;

use crate::harness::{eventually, prompt};
use crate::subagent_sessions::{announced, states, text_of, turn_of};
use crate::subagents::{live, on_exec, subagent};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_capability_that_is_not_an_object_keeps_the_tool_calls() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (parent, stop) = turn_of(
        &mut live,
        json!({"subagents": true}),
        None,
        "scenario:subagent ask a helper",
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    assert!(announced(&all, &parent).is_empty());
    assert!(
        all.iter()
            .all(|(s, u)| *s == parent && u["sessionUpdate"] != "subagent_update")
    );
    let (_, last) = subagent(&live.updates, "Subagent: lister");
    assert_eq!(last["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_model_fails_ends_idle_with_codexs_error() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (parent, stop) = turn_of(
        &mut live,
        json!({"subagents": {}}),
        None,
        "scenario:subagent_fail break it",
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let child = announced(&all, &parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = states(&all, &parent, &child).pop().unwrap();
    assert_eq!(last["state"], "idle", "{last}");
    assert_eq!(last["stopReason"], "error", "{last}");
    let why = last["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("the helper's model broke"), "{last}");
    assert!(text_of(&all, &parent).contains("The helper failed."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompting_a_childs_session_is_refused_with_why_and_the_parent_goes_on() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (refused, next) = live
        .acplb
        .client(&updates, async move |cx| {
            let caps: ClientCapabilities = serde_json::from_value(json!({"subagents": {}})).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            prompt(&cx, &s.session_id, "scenario:subagent ask a helper").await?;
            let parent = s.session_id.to_string();
            let child = announced(&seen.all_with_sessions(), &parent)[0]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned();
            let refused = cx
                .send_request(PromptRequest::new(
                    SessionId::new(child.clone()),
                    vec!["do it yourself".into()],
                ))
                .block_task()
                .await;
            let load = cx
                .send_request(LoadSessionRequest::new(SessionId::new(child.clone()), &ws))
                .block_task()
                .await;
            assert!(
                load.as_ref()
                    .is_err_and(|e| e.message.contains("is a subagent's session")),
                "{load:?}"
            );
            // A cancel of the child is no request: nothing to answer, nothing breaks.
            cx.send_notification(CancelNotification::new(SessionId::new(format!(
                "{parent}:subagent:x"
            ))))
            .unwrap();
            let next = prompt(&cx, &s.session_id, "hello again").await?.stop_reason;
            Ok((refused, next))
        })
        .await
        .unwrap();
    let error = refused.expect_err("a child's session takes no prompt");
    assert!(error.message.contains("is a subagent's session"), "{error:?}");
    assert!(error.message.contains("takes no prompt"), "{error:?}");
    assert_eq!(next, StopReason::EndTurn);
}

/// AIR knows a child's first life by its bare thread id, which looks like any session's: a
/// prompt or load naming it is still told that it names a subagent's session, and the parent
/// goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompting_an_air_childs_bare_id_is_refused_with_why_and_the_parent_goes_on() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let notes = live.acplb.vendor_notes.clone();
    let (child, refused, load, next) = live
        .acplb
        .client(&updates, async move |cx| {
            let caps: ClientCapabilities = serde_json::from_value(json!({"_meta": {"jetbrains": {"air":
                {"version": 1, "capabilities": ["nativeSubagentSessions"]}}}}))
            .unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            prompt(&cx, &s.session_id, "scenario:subagent ask a helper").await?;
            let spawned: Vec<String> = notes
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, p)| p["update"]["sessionUpdate"] == "subagent_spawned")
                .filter_map(|(_, p)| p["update"]["subagentSessionId"].as_str().map(str::to_owned))
                .collect();
            assert_eq!(spawned.len(), 1, "{spawned:?}");
            let child = SessionId::new(spawned[0].clone());
            let refused = cx
                .send_request(PromptRequest::new(child.clone(), vec!["do it yourself".into()]))
                .block_task()
                .await;
            let load = cx
                .send_request(LoadSessionRequest::new(child.clone(), &ws))
                .block_task()
                .await;
            let next = prompt(&cx, &s.session_id, "hello again").await?.stop_reason;
            Ok((child, refused, load, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        !child.0.contains(':'),
        "a first life is a bare thread id: {child}"
    );
    let error = refused.expect_err("a child's session takes no prompt");
    assert!(error.message.contains("is a subagent's session"), "{error:?}");
    let error = load.expect_err("a child's session is not loaded on its own");
    assert!(error.message.contains("is a subagent's session"), "{error:?}");
    assert_eq!(next, StopReason::EndTurn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_child_works_ends_it_cancelled_at_once() {
    if on_exec() {
        return;
    }
    for air in [false, true] {
        cancel_while_a_child_works(air).await;
    }
}

async fn cancel_while_a_child_works(air: bool) {
    let mut live = live();
    let caps = if air {
        json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["nativeSubagentSessions"]}}}})
    } else {
        json!({"subagents": {}})
    };
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (stop, took, parent) = live
        .acplb
        .client(&updates, async move |cx| {
            let caps: ClientCapabilities = serde_json::from_value(caps).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec!["scenario:subagent_slow nap".into()],
                ))
                .block_task();
            let canceller = async {
                // The child runs its command in its own session.
                let running = || {
                    seen.all_with_sessions().iter().any(|(s, u)| {
                        *s != parent
                            && u["sessionUpdate"] == "tool_call"
                            && u.to_string().contains("sleep 30")
                    })
                };
                assert!(
                    eventually(Duration::from_secs(60), running).await,
                    "the child's sleep never showed"
                );
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))
                    .unwrap();
                at
            };
            let (resp, at) = tokio::join!(turn, canceller);
            Ok((resp?.stop_reason, at.elapsed(), parent))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    let all = live.updates.all_with_sessions();
    if air {
        let ended: Vec<_> = crate::air_tasks::task_notes(&live)
            .into_iter()
            .filter(|n| n["update"]["sessionUpdate"] == "subagent_state_update")
            .collect();
        assert_eq!(ended.len(), 1, "{ended:?}");
        assert_eq!(ended[0]["update"]["state"], "cancelled");
        return;
    }
    let child = announced(&all, &parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = states(&all, &parent, &child).pop().unwrap();
    assert_eq!(
        last,
        json!({"state": "idle", "stopReason": "cancelled"}),
        "{all:?}"
    );
}

/// AIR's answer waits for a child the turn left working (`sleep 30`): a cancel then stops the
/// child at once, its state `cancelled`, and leaves no Codex work behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_airs_answer_waits_for_a_child_stops_it_at_once() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (stop, took, left) = leave_a_sleeper(&mut live, true).await;
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    assert!(left.is_empty(), "codex work left after the cancel: {left:?}");
    let ended: Vec<_> = air_ends(&live);
    assert_eq!(ended, ["cancelled"], "{:?}", live.updates.all_with_sessions());
}

/// AIR's wait for a child has an end (`ACPLB_CODEX_SUBAGENT_WAIT_MS`): the answer comes, the
/// child is stopped and shown `failed`, and no Codex work is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn airs_wait_for_a_child_ends_in_time_and_stops_it() {
    if on_exec() {
        return;
    }
    let wait = [("ACPLB_CODEX_SUBAGENT_WAIT_MS".to_owned(), "1500".to_owned())];
    let mut live = crate::live::Live::start_with(
        acplb_playback::mock_model::MockConfig::default(),
        &["-c", "features.multi_agent_v2=true"],
        &wait,
    );
    let (stop, _, left) = leave_a_sleeper(&mut live, false).await;
    assert_eq!(stop, StopReason::EndTurn);
    assert!(left.is_empty(), "codex work left after the wait: {left:?}");
    assert_eq!(air_ends(&live), ["failed"]);
}

/// AIR's subagent ends the client was told of, in order.
fn air_ends(live: &crate::live::Live) -> Vec<String> {
    crate::air_tasks::task_notes(live)
        .into_iter()
        .filter(|n| n["update"]["sessionUpdate"] == "subagent_state_update")
        .map(|n| n["update"]["state"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// `scenario:subagent_leave` by an AIR client: the parent answers at once and leaves a child
/// running `sleep 30`. With `cancel`, a cancel once the parent's answer and the child's sleep
/// showed. The stop reason, how long the cancel took, and the Codex work left a second after.
async fn leave_a_sleeper(live: &mut crate::live::Live, cancel: bool) -> (StopReason, Duration, Vec<u32>) {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (marker, acplb_pid) = (live.codex_marker(), live.acplb.pid);
    live.acplb
        .client(&updates, async move |cx| {
            let air = json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["nativeSubagentSessions"]}}}});
            let caps: ClientCapabilities = serde_json::from_value(air).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(s.session_id.clone(), vec!["scenario:subagent_leave go".into()]))
                .block_task();
            let canceller = async {
                if !cancel {
                    return Instant::now();
                }
                let waiting = || {
                    let all = seen.all_with_sessions();
                    let answered = text_of(&all, &parent).contains("I left a sleeper working.");
                    let sleeping = all.iter().any(|(s, u)| {
                        *s != parent && u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 30")
                    });
                    answered && sleeping
                };
                assert!(eventually(Duration::from_secs(60), waiting).await, "the wait never began");
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone())).unwrap();
                at
            };
            let (resp, at) = tokio::join!(turn, canceller);
            let took = at.elapsed();
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            Ok((resp?.stop_reason, took, left))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

/// Codex killed while a child works in its own session: the prompt fails with why, the child's
/// state becomes `unknown` (nobody can say what it does), and the session's next prompt runs on
/// a new Codex.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_killed_while_a_child_works_leaves_it_unknown_and_the_session_goes_on() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let marker = live.codex_marker();
    let (failed, next, parent) = live
        .acplb
        .client(&updates, async move |cx| {
            let caps: ClientCapabilities = serde_json::from_value(json!({"subagents": {}})).unwrap();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let parent = s.session_id.to_string();
            let turn = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:subagent_slow nap".into()],
            ));
            let sleeping = || {
                seen.all_with_sessions().iter().any(|(s, u)| {
                    *s != parent && u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 30")
                })
            };
            assert!(
                eventually(Duration::from_secs(60), sleeping).await,
                "the child's sleep never showed"
            );
            // Codex's own process: `codex app-server`.
            let server = crate::subagent_sessions::app_server(&marker).expect("the app-server runs");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(server).unwrap()),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let failed = turn.block_task().await;
            let next = prompt(&cx, &s.session_id, "hello again").await?.stop_reason;
            Ok((failed, next, parent))
        })
        .await
        .unwrap();
    let error = failed.expect_err("the turn fails");
    assert!(
        error.message.contains("exited before the turn finished"),
        "{}",
        error.message
    );
    assert_eq!(next, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    let child = announced(&all, &parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let last = states(&all, &parent, &child).pop().unwrap();
    assert_eq!(last, json!({"state": "unknown"}), "{all:?}");
}
