//! Codex's thread goals (ADR 0045) end to end, on the real Codex and the mock model: `/goal
//! <objective>` sets the goal and its prompt runs the turns Codex starts for it until the
//! model marks it complete (`update_goal`), across a turn Codex starts on its own; the editor
//! sees the goal in `session_info_update._meta.goal` and a line when its status changes;
//! `/goal` shows it; the vendor method `_session/goal` does the same as the command; on exec
//! `/goal` says it needs the app-server transport.

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::UntypedMessage;
use agent_client_protocol::v1::schema::{ClientCapabilities, SessionId};
use serde_json::{Value, json};

use crate::background::open;
use crate::harness::{Updates, initialize_json, prompt};
use crate::live::{Live, assert_end_turn};

/// acplb on `transport`, whatever `ACPLB_TRANSPORT` says.
pub(crate) fn live_on(transport: &str, codex_config: &[&str]) -> Live {
    let mut args = vec!["--transport", transport];
    for kv in codex_config {
        args.extend(["-c", kv]);
    }
    Live::start_with(MockConfig::default(), &args, &[])
}

/// `_session/goal` with `params`; its answer.
pub(crate) async fn goal_request(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    method: &str,
    params: Value,
) -> Result<Value, agent_client_protocol::Error> {
    let ask = UntypedMessage::new(method, params)?;
    cx.send_request(ask).block_task().await
}

/// The goal snapshots the editor was shown, in order (`null`: cleared).
pub(crate) fn snapshots(updates: &Updates) -> Vec<Value> {
    updates
        .of_kind("session_info_update")
        .into_iter()
        .filter_map(|u| u.get("_meta").and_then(|m| m.get("goal")).cloned())
        .collect()
}

/// The statuses of those snapshots.
pub(crate) fn statuses(updates: &Updates) -> Vec<String> {
    snapshots(updates)
        .iter()
        .map(|s| s["status"].as_str().unwrap_or("cleared").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_runs_until_codex_marks_it_complete_and_goal_shows_it() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (offered, before, during, after) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(&prompt(&cx, id, "/goal").await?.stop_reason);
            let before = updates.agent_text();
            let offered = updates
                .of_kind("available_commands_update")
                .iter()
                .any(|u| u.to_string().contains("\"name\":\"goal\""));
            updates.clear();
            let done = prompt(&cx, id, "/goal Ship the release scenario:goal_done").await?;
            assert_end_turn(&done.stop_reason);
            let during = (updates.agent_text(), statuses(&updates), snapshots(&updates));
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/goal").await?.stop_reason);
            Ok((offered, before, during, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(offered, "`/goal` is in the command list");
    assert!(before.contains("no conversation running"), "{before}");
    let (text, statuses, snapshots) = during;
    assert!(text.contains("Working toward the goal."), "{text}");
    assert!(text.contains("The goal is complete."), "{text}");
    assert!(
        text.contains("Goal complete: Ship the release scenario:goal_done"),
        "{text}"
    );
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("active"),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("complete"),
        "{statuses:?}"
    );
    let last = snapshots.last().cloned().unwrap_or_default();
    assert_eq!(last["objective"], "Ship the release scenario:goal_done", "{last}");
    assert_eq!(last["controlMethod"], "_session/goal", "{last}");
    // Codex counts a goal's tokens at a turn's end, which may come after the goal completed.
    assert!(
        last["tokensUsed"].is_u64() && last["timeUsedSeconds"].is_u64(),
        "{last}"
    );
    assert!(
        last["createdAt"].as_i64().unwrap_or(0) > 1_000_000_000_000,
        "milliseconds: {last}"
    );
    assert!(after.contains("- Status: complete"), "{after}");
    assert!(after.contains("Ship the release"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goal_budget_caps_the_goals_tokens_and_shows_them_used_of_it() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (budgeted, snapshot, shown) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            let done = prompt(&cx, id, "/goal Ship the release scenario:goal_done").await?;
            assert_end_turn(&done.stop_reason);
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/goal budget 250_000").await?.stop_reason);
            let budgeted = updates.agent_text();
            let snapshot = snapshots(&updates).last().cloned().unwrap_or_default();
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/goal").await?.stop_reason);
            Ok((budgeted, snapshot, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(budgeted.contains("of 250000 tokens"), "{budgeted}");
    assert_eq!(
        snapshot["tokenBudget"], 250_000,
        "the editor's snapshot follows: {snapshot}"
    );
    assert_eq!(
        snapshot["objective"], "Ship the release scenario:goal_done",
        "{snapshot}"
    );
    assert!(shown.contains("of 250000 tokens"), "Codex kept it: {shown}");
    assert!(shown.contains("Ship the release"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_follows_the_turn_codex_starts_next_while_the_goal_is_active() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (text, statuses) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            let done = prompt(&cx, id, "/goal Two passes scenario:goal_continue").await?;
            assert_end_turn(&done.stop_reason);
            Ok((updates.agent_text(), statuses(&updates)))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let first = text.find("First pass done; more to do.");
    let second = text.find("Second pass: the goal is complete.");
    assert!(
        first.is_some() && second.is_some() && first < second,
        "both turns in one prompt, in order: {text}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("complete"),
        "{statuses:?}"
    );
    // The model was asked once per request of the two turns, and never again after.
    let goal_requests = live
        .mock
        .requests()
        .iter()
        .filter(|r| r.scenario.as_deref() == Some("goal_continue"))
        .count();
    assert_eq!(goal_requests, 3, "turn 1, turn 2's call, turn 2's answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vendor_method_sets_pauses_resumes_and_clears_the_goal() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (init, answers, statuses, text) = live
        .acplb
        .client(&updates, async |cx| {
            let init = initialize_json(&cx).await?;
            let id: SessionId = open(&cx, &cwd, ClientCapabilities::new()).await?;
            let s = id.to_string();
            let mut answers = Vec::new();
            let set = json!({"sessionId": s, "action": "set", "objective": "Tidy up scenario:goal_done"});
            answers.push(goal_request(&cx, "_session/goal", set).await?);
            for action in ["pause", "resume"] {
                let params = json!({"sessionId": s, "action": action});
                answers.push(goal_request(&cx, "_session/goal", params).await?);
            }
            let clear = json!({"sessionId": s, "action": "clear"});
            answers.push(goal_request(&cx, "_codex/session/goal_control", clear).await?);
            Ok((init, answers, statuses(&updates), updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let goal = &init["agentCapabilities"]["_meta"]["goal"];
    assert_eq!(goal["controlMethod"], "_session/goal", "{init}");
    assert_eq!(
        goal["actions"],
        json!(["set", "pause", "resume", "clear"]),
        "{init}"
    );
    for answer in &answers {
        assert_eq!(answer["stopReason"], "end_turn", "{answers:?}");
    }
    // Set ran the goal to complete; pause paused it; resume had Codex take it up again (the
    // scenario completes it at once); clear cleared it.
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("active"),
        "{statuses:?}"
    );
    assert!(statuses.iter().any(|s| s == "paused"), "{statuses:?}");
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("cleared"),
        "{statuses:?}"
    );
    let completes = statuses.iter().filter(|s| *s == "complete").count();
    assert!(
        completes >= 2,
        "completed, then again after the resume: {statuses:?}"
    );
    assert!(text.contains("Goal cleared."), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_exec_goal_says_it_needs_the_app_server_transport() {
    let mut live = live_on("exec", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (text, init, refused) = live
        .acplb
        .client(&updates, async |cx| {
            let init = initialize_json(&cx).await?;
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(
                &prompt(&cx, &id, "/goal Ship it scenario:goal_done")
                    .await?
                    .stop_reason,
            );
            let params = json!({"sessionId": id.to_string(), "action": "set", "objective": "x"});
            let refused = goal_request(&cx, "_session/goal", params)
                .await
                .expect_err("refused");
            Ok((updates.agent_text(), init, refused))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(text.contains("`/goal` needs the app-server transport"), "{text}");
    assert!(
        live.mock.requests().is_empty(),
        "the model was never asked: {:?}",
        live.mock.requests().len()
    );
    assert!(init["agentCapabilities"]["_meta"]["goal"].is_null(), "{init}");
    assert_eq!(
        refused.code,
        agent_client_protocol::ErrorCode::INVALID_PARAMS,
        "{refused:?}"
    );
    assert!(refused.message.contains("offers no goals"), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_sent_while_the_goal_runs_stops_codex_going_on() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (set, pause, statuses, text) = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?.to_string();
            let params = json!({"sessionId": id, "action": "set", "objective": "Wait scenario:goal_wait"});
            let set = goal_request(&cx, "_session/goal", params);
            let pauser = async {
                let waiting = || {
                    updates
                        .of_kind("tool_call")
                        .iter()
                        .any(|c| c.to_string().contains("release"))
                };
                let started = crate::harness::eventually(std::time::Duration::from_secs(30), waiting).await;
                assert!(started, "the goal's command never started");
                let params = json!({"sessionId": id, "action": "pause"});
                let pause = goal_request(&cx, "_session/goal", params);
                // The pause goes into the running turn; the turn goes on until released.
                let release = async {
                    let paused = || statuses(&updates).iter().any(|s| s == "paused");
                    assert!(
                        crate::harness::eventually(std::time::Duration::from_secs(10), paused).await,
                        "paused while the turn runs"
                    );
                    std::fs::write(cwd.join("release"), "").expect("release");
                };
                let (pause, ()) = tokio::join!(pause, release);
                pause
            };
            let (set, pause) = tokio::join!(set, pauser);
            Ok((set?, pause?, statuses(&updates), updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(set["stopReason"], "end_turn", "{set}");
    assert_eq!(pause["stopReason"], "end_turn", "{pause}");
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("paused"),
        "{statuses:?}"
    );
    assert!(text.contains("First pass done; more to do."), "{text}");
    assert!(
        !text.contains("A second pass"),
        "Codex went on after the pause: {text}"
    );
    let steps: Vec<usize> = live
        .mock
        .requests()
        .iter()
        .filter(|r| r.scenario.as_deref() == Some("goal_wait"))
        .map(|r| r.step)
        .collect();
    assert_eq!(steps, [2, 3], "no turn after the paused one");
}
