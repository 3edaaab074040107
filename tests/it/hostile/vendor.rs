//! Vendor methods under bad input (ADR 0046), on the transport of this run: unknown methods
//! (with and without `_`) get `-32601` naming the method; params of the wrong shape, a blank or
//! relative value, an unknown session and an empty prompt are refused with the reason; a hook
//! changed since it was listed is not trusted and the config is untouched; stopping a task that
//! does not exist answers `stopped: false`; a vendor request naming a session whose turn runs
//! is answered at once, and acplb serves on after all of it.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::ErrorCode;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, PromptRequest};
use serde_json::{Value, json};

use crate::harness::{eventually, open_session, prompt};
use crate::hooks::add_marker_hook;
use crate::live::{Live, assert_end_turn, set_mode};
use crate::vendor::vendor;

const LONG: &str = r#"
[scenarios.hv_long]
[[scenarios.hv_long.steps]]
actions = [{ type = "exec", cmd = "sleep 3", yield_time_ms = 10000 }]
[[scenarios.hv_long.steps]]
actions = [{ type = "message", text = "done" }]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_vendor_requests_are_refused_with_the_reason_and_acplb_serves_on() {
    let mut live = Live::start();
    let ws = live.workspace();
    let w = ws.to_string_lossy().into_owned();
    let updates = live.updates.clone();
    let (errors, unknown_task, after) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id.to_string();
            let asks = [
                ("no/such_method", json!({})),
                ("_nobody/knows", json!({})),
                ("_session/rename", json!({ "sessionId": id })),
                ("_session/archive", json!({ "session": id })),
                ("session/set_model", json!({ "sessionId": id, "modelId": 7 })),
                (
                    "_session/steering",
                    json!({ "sessionId": "no-such-session", "prompt": [] }),
                ),
                ("_session/steering", json!({ "sessionId": id, "prompt": [] })),
                ("_codex/hooks/list", json!({ "cwd": "relative/dir" })),
                ("_codex/hooks/trust", json!({ "cwd": w, "hooks": [] })),
                (
                    "_session/async_task/stop",
                    json!({ "sessionId": 42, "asyncTaskId": "x" }),
                ),
                (
                    "_session/async_task/stop",
                    json!({ "sessionId": "no-such-session", "asyncTaskId": "x" }),
                ),
                (
                    "_session/async_task/stop",
                    json!({ "sessionId": id, "asyncTaskId": " " }),
                ),
            ];
            let mut errors = Vec::new();
            for (method, params) in asks {
                let e = vendor(&cx, method, params).await.expect_err(method);
                errors.push((method, e.code, e.message));
            }
            let unknown_task = vendor(
                &cx,
                "_session/async_task/stop",
                json!({ "sessionId": id, "asyncTaskId": "no-such-task" }),
            )
            .await?;
            let after = prompt(&cx, &s.session_id, "scenario:plain still here").await?;
            Ok((errors, unknown_task, after))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let code = |i: usize| errors[i].1;
    let says = |i: usize, what: &str| {
        assert!(errors[i].2.contains(what), "{}: {:?}", errors[i].0, errors[i]);
    };
    assert_eq!(code(0), ErrorCode::METHOD_NOT_FOUND, "{errors:?}");
    says(0, "`no/such_method`");
    assert_eq!(code(1), ErrorCode::METHOD_NOT_FOUND, "{errors:?}");
    says(1, "`_nobody/knows`");
    for refused in &errors[2..] {
        assert_eq!(refused.1, ErrorCode::INVALID_PARAMS, "{refused:?}");
    }
    says(2, "missing field `title`");
    says(3, "missing field `sessionId`");
    says(4, "invalid params for `session/set_model`");
    says(5, "unknown session `no-such-session`");
    says(6, "`prompt` is empty");
    says(7, "absolute path");
    says(8, "`hooks` is empty");
    says(9, "`sessionId` must be a string");
    says(10, "unknown session `no-such-session`");
    says(11, "`asyncTaskId` is blank");
    assert_eq!(unknown_task, json!({ "stopped": false }));
    assert_end_turn(&after.stop_reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_changed_since_it_was_listed_is_not_trusted_and_nothing_is_written() {
    let mut live = Live::start();
    let marker = live.workspace().parent().unwrap().join("hook-ran");
    add_marker_hook(&live.env.home(), &marker);
    let config = live.env.home().join("config.toml");
    let ws = live.workspace();
    let w = ws.to_string_lossy().into_owned();
    let updates = live.updates.clone();
    let (listed, refused, written_before) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let listed = vendor(&cx, "_codex/hooks/list", json!({ "cwd": w })).await?;
            let written_before = std::fs::read_to_string(&config).unwrap();
            let seen = json!([{ "key": listed["hooks"][0]["key"], "currentHash": "sha256:not-what-it-is" }]);
            let refused = vendor(&cx, "_codex/hooks/trust", json!({ "cwd": w, "hooks": seen }))
                .await
                .expect_err("a changed hook is not trusted");
            Ok((listed, refused, written_before))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(listed["hooks"][0]["trustStatus"], "untrusted", "{listed}");
    assert!(refused.message.contains("changed or went away"), "{refused:?}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        written_before,
        "the config was written"
    );
    assert!(!marker.exists(), "the hook ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vendor_request_naming_a_busy_session_is_answered_before_its_turn_ends() {
    let script = Script::builtin().layered_with(Script::from_toml_str(LONG, "hostile-vendor").unwrap());
    let mut live = Live::start_with(MockConfig::default().with_script(script), &[], &[]);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (answer, took, turn_still_ran) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            let turn = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:hv_long".into()],
            ));
            assert!(eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await);
            let started = Instant::now();
            let params = json!({ "sessionId": s.session_id.to_string(), "asyncTaskId": "nothing-here" });
            let answer = vendor(&cx, "_session/async_task/stop", params).await?;
            let took = started.elapsed();
            // The turn had not ended when the answer came: its end is still ahead.
            let turn_still_ran = watch.agent_text().is_empty();
            assert_end_turn(&turn.block_task().await?.stop_reason);
            Ok((answer, took, turn_still_ran))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(answer, json!({ "stopped": false }));
    assert!(turn_still_ran, "the answer waited for the turn ({took:?})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_list_subscriptions_refuse_bad_directories_and_too_many_and_unsubscribe_twice() {
    let mut live = Live::start();
    let w = live.workspace().to_string_lossy().into_owned();
    let updates = live.updates.clone();
    let (relative, missing, too_many, twice) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let relative = vendor(&cx, "_session/list/subscribe", json!({ "cwd": "here" }))
                .await
                .expect_err("relative");
            let missing = vendor(&cx, "_session/list/subscribe", json!({}))
                .await
                .expect_err("no cwd");
            let mut first = Value::Null;
            for i in 0..16 {
                let sub = vendor(&cx, "_session/list/subscribe", json!({ "cwd": w })).await?;
                if i == 0 {
                    first = sub;
                }
            }
            let too_many = vendor(&cx, "_session/list/subscribe", json!({ "cwd": w }))
                .await
                .expect_err("17th");
            let params = json!({ "subscriptionId": first["subscriptionId"] });
            vendor(&cx, "_session/list/unsubscribe", params.clone()).await?;
            let twice = vendor(&cx, "_session/list/unsubscribe", params).await?;
            // One freed: a new one is taken.
            vendor(&cx, "_session/list/subscribe", json!({ "cwd": w })).await?;
            Ok((relative, missing, too_many, twice))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(relative.message.contains("absolute path"), "{relative:?}");
    assert!(missing.message.contains("missing field `cwd`"), "{missing:?}");
    assert!(too_many.message.contains("at most 16"), "{too_many:?}");
    assert_eq!(twice, json!({}), "unsubscribing twice is no error");
}
