//! Goals under bad input and faults (ADR 0045): `_session/goal` for an unknown session, with
//! a blank or missing objective, an unknown action or params of the wrong shape is refused
//! with the reason; pausing when there is no goal fails on both paths and says so; a Codex
//! whose goals are off refuses, and acplb says how to turn them on; a cancelled goal stops at
//! once, its command with it, and the goal is paused so Codex does not take it up again.

use std::time::Duration;

use agent_client_protocol::ErrorCode;
use agent_client_protocol::v1::schema::{CancelNotification, ClientCapabilities, PromptRequest, StopReason};
use serde_json::json;

use crate::background::open;
use crate::goals::{goal_request, live_on, statuses};
use crate::harness::{eventually, prompt};
use crate::live::assert_end_turn;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_goal_requests_are_refused_with_the_reason() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let errors = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?.to_string();
            let mut errors = Vec::new();
            for params in [
                json!({"sessionId": "no-such-session", "action": "pause"}),
                json!({"sessionId": id, "action": "set", "objective": "   "}),
                json!({"sessionId": id, "action": "set"}),
                json!({"sessionId": id, "action": "stop"}),
                json!({"sessionId": id, "action": "pause", "objective": "x"}),
                json!({"sessionId": id, "action": "set", "objective": "clear"}),
                json!({"sessionId": id}),
            ] {
                let e = goal_request(&cx, "_session/goal", params)
                    .await
                    .expect_err("refused");
                errors.push((e.code, e.message));
            }
            Ok(errors)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    for (code, _) in &errors {
        assert_eq!(*code, ErrorCode::INVALID_PARAMS, "{errors:?}");
    }
    assert_eq!(errors[0].1, "Unknown session: no-such-session", "{errors:?}");
    assert!(errors[1].1.contains("must not be blank"), "{errors:?}");
    assert!(errors[2].1.contains("`set` needs an `objective`"), "{errors:?}");
    assert!(
        errors[3]
            .1
            .contains("unknown `action` `stop`; it is one of: set, pause, resume, clear"),
        "{errors:?}"
    );
    assert!(errors[4].1.contains("`pause` takes no `objective`"), "{errors:?}");
    assert!(errors[5].1.contains("use `action: \"clear\"`"), "{errors:?}");
    assert!(errors[6].1.contains("action"), "{errors:?}");
    assert!(live.mock.requests().is_empty(), "nothing reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_when_there_is_no_goal_fails_on_both_paths_and_says_so() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (before_thread, command, vendor, cleared) = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?;
            let before_thread = prompt(&cx, &id, "/goal pause").await.expect_err("no goal");
            assert_end_turn(&prompt(&cx, &id, "scenario:plain hello").await?.stop_reason);
            let command = prompt(&cx, &id, "/goal pause").await.expect_err("no goal");
            let params = json!({"sessionId": id.to_string(), "action": "pause"});
            let vendor = goal_request(&cx, "_session/goal", params)
                .await
                .expect_err("no goal");
            updates.clear();
            assert_end_turn(&prompt(&cx, &id, "/goal clear").await?.stop_reason);
            Ok((before_thread, command, vendor, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    for e in [&before_thread, &command, &vendor] {
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        assert!(e.message.contains("There is no goal to pause"), "{e:?}");
    }
    assert!(cleared.contains("There was no goal to clear."), "{cleared}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_without_a_goal_or_a_number_is_refused_and_reaches_nothing() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (before_thread, no_goal, bad) = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?;
            let before_thread = prompt(&cx, &id, "/goal budget 1000").await.expect_err("no goal");
            assert_end_turn(&prompt(&cx, &id, "scenario:plain hello").await?.stop_reason);
            let no_goal = prompt(&cx, &id, "/goal budget 1000").await.expect_err("no goal");
            let mut bad = Vec::new();
            for text in [
                "/goal budget",
                "/goal budget 0",
                "/goal budget lots",
                "/goal budget -5",
            ] {
                bad.push(prompt(&cx, &id, text).await.expect_err("no number"));
            }
            Ok((before_thread, no_goal, bad))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    for e in [&before_thread, &no_goal] {
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        assert!(e.message.contains("There is no goal to budget"), "{e:?}");
    }
    for e in &bad {
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        assert!(e.message.contains("whole number of tokens above zero"), "{e:?}");
    }
    assert_eq!(
        live.mock.requests().len(),
        1,
        "only the plain prompt reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_with_goals_off_refuses_and_acplb_says_how_to_turn_them_on() {
    let mut live = live_on("app-server", &["features.goals=false"]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (refused, vendor, next) = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?;
            let refused = prompt(&cx, &id, "/goal Ship it scenario:goal_done")
                .await
                .expect_err("goals are off");
            let params = json!({"sessionId": id.to_string(), "action": "resume"});
            let vendor = goal_request(&cx, "_session/goal", params).await.expect_err("off");
            let next = prompt(&cx, &id, "scenario:plain still there?").await?;
            Ok((refused, vendor, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    for e in [&refused, &vendor] {
        assert!(e.message.contains("its goals are turned off"), "{e:?}");
        assert!(e.message.contains("features.goals"), "{e:?}");
    }
    assert!(refused.message.contains("would not set the goal"), "{refused:?}");
    assert!(vendor.message.contains("would not resume the goal"), "{vendor:?}");
    assert_end_turn(&next.stop_reason);
    let goal_asked = live
        .mock
        .requests()
        .iter()
        .any(|r| r.scenario.as_deref() == Some("goal_done"));
    assert!(!goal_asked, "the model never worked on the refused goal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_goal_stops_at_once_and_is_paused() {
    let mut live = live_on("app-server", &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let (stop, left, statuses, text, shown) = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, ClientCapabilities::new()).await?;
            let request =
                PromptRequest::new(id.clone(), vec!["/goal Wait a while scenario:goal_slow".into()]);
            let turn = cx.send_request(request).block_task();
            let canceller = async {
                let sleeping = || {
                    updates
                        .of_kind("tool_call")
                        .iter()
                        .any(|c| c.to_string().contains("sleep 30"))
                };
                assert!(
                    eventually(Duration::from_secs(30), sleeping).await,
                    "the goal's command never started"
                );
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
            };
            let (answer, ()) = tokio::join!(turn, canceller);
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(2)).await;
            // The next prompt runs once the cancelled one is done with Codex: all it said is in.
            assert_end_turn(&prompt(&cx, &id, "/goal").await?.stop_reason);
            let text = updates.agent_text();
            let shown = text.rsplit("**Goal**").next().unwrap_or_default().to_owned();
            Ok((answer?.stop_reason, left, statuses(&updates), text, shown))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        left.is_empty(),
        "the goal's command outlived the cancel: {left:?}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("paused"),
        "{statuses:?}"
    );
    assert!(text.contains("the goal is paused"), "{text}");
    assert!(shown.contains("- Status: paused"), "{shown}");
}
