//! The TS codex-acp's vendor methods that `JetBrains` AIR sends (ADR 0046), end to end with the
//! real Codex and the mock model on the transport of this run: `_session/rename`,
//! `_session/archive` and `_session/unarchive`, `session/set_model`, `authentication/status` and
//! `authentication/logout`, `_session/steering`, `_codex/hooks/list` and `_codex/hooks/trust`,
//! and (app-server) `_session/async_task/stop`.

use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ClientCapabilities, InitializeRequest, ListSessionsRequest, PromptRequest, SessionId,
};
use agent_client_protocol::{Agent, Error, UntypedMessage};
use serde_json::{Value, json};

use crate::background::{alive, command_updates, listed, open};
use crate::harness::{eventually, initialize_json, open_session, prompt, transport};
use crate::hooks::add_marker_hook;
use crate::live::{Live, assert_end_turn, set_mode};
use crate::login::{key_meta, needs_openai_sign_in, test_key};

/// Sends vendor request `method` with `params`; its answer.
pub(crate) async fn vendor(cx: &ConnectionTo<Agent>, method: &str, params: Value) -> Result<Value, Error> {
    cx.send_request(UntypedMessage::new(method, params)?)
        .block_task()
        .await
}

const SCENARIOS: &str = r#"
[scenarios.v_long]
[[scenarios.v_long.steps]]
actions = [{ type = "exec", cmd = "sleep 2", yield_time_ms = 10000 }]
[[scenarios.v_long.steps]]
actions = [{ type = "message", text = "the long turn's answer" }]

[scenarios.v_steered]
[[scenarios.v_steered.steps]]
actions = [{ type = "message", text = "steered answer" }]
"#;

fn live_with_scenarios(args: &[&str]) -> Live {
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "vendor-test").unwrap());
    Live::start_with(MockConfig::default().with_script(script), args, &[])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_set_model_archive_and_unarchive_act_as_their_acp_methods() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let u = updates.clone();
    let (answers, listed_archived, listed_back, model) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id.to_string();
            let model = s
                .config_options
                .unwrap_or_default()
                .iter()
                .map(|o| serde_json::to_value(o).unwrap())
                .find(|o| o["id"] == "model")
                .and_then(|o| o["options"].as_array().and_then(|v| v.last().cloned()))
                .and_then(|o| o["value"].as_str().map(str::to_owned))
                .expect("a model option with values");
            assert_end_turn(
                &prompt(&cx, &s.session_id, "scenario:plain hello")
                    .await?
                    .stop_reason,
            );
            let mut answers = vec![
                vendor(
                    &cx,
                    "_session/rename",
                    json!({ "sessionId": id, "title": "Renamed by AIR" }),
                )
                .await?,
                vendor(
                    &cx,
                    "session/set_model",
                    json!({ "sessionId": id, "modelId": model }),
                )
                .await?,
            ];
            let shows_model = eventually(Duration::from_secs(5), || {
                u.json().iter().any(|x| {
                    x["sessionUpdate"] == "config_option_update"
                        && x["configOptions"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|o| o["id"] == "model" && o["currentValue"] == model.as_str())
                })
            })
            .await;
            assert!(shows_model, "the model switch is shown: {:?}", u.json());
            answers.push(vendor(&cx, "_session/archive", json!({ "sessionId": id })).await?);
            let listed_archived = cx.send_request(ListSessionsRequest::new()).block_task().await?;
            answers.push(vendor(&cx, "_session/unarchive", json!({ "sessionId": id })).await?);
            let listed_back = cx.send_request(ListSessionsRequest::new()).block_task().await?;
            let ids = |l: &agent_client_protocol::v1::schema::ListSessionsResponse| {
                l.sessions
                    .iter()
                    .map(|s| s.session_id.to_string())
                    .collect::<Vec<_>>()
            };
            Ok((
                answers,
                ids(&listed_archived).contains(&id),
                ids(&listed_back).contains(&id),
                model,
            ))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(answers.iter().all(|a| *a == json!({})), "{answers:?}");
    let titled = live
        .updates
        .json()
        .iter()
        .any(|x| x["sessionUpdate"] == "session_info_update" && x["title"] == "Renamed by AIR");
    assert!(titled, "the title is shown: {:?}", live.updates.json());
    assert!(!listed_archived, "an archived session is not listed");
    assert!(listed_back, "an unarchived one is listed again");
    assert!(!model.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_status_and_logout_speak_the_peer_shape_and_never_the_key() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    needs_openai_sign_in(&live.env.home());
    let key = test_key();
    let updates = live.updates.clone();
    let k = key.clone();
    let (before, signed_in, out, after) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let before = vendor(&cx, "authentication/status", json!({})).await?;
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&k)))
                .block_task()
                .await?;
            let signed_in = vendor(&cx, "authentication/status", json!({})).await?;
            let out = vendor(&cx, "authentication/logout", json!({})).await?;
            let after = vendor(&cx, "authentication/status", Value::Null).await?;
            Ok((before, signed_in, out, after))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(before, json!({ "type": "unauthenticated" }));
    assert_eq!(signed_in, json!({ "type": "api-key" }));
    assert_eq!(out, json!({}));
    assert_eq!(after, json!({ "type": "unauthenticated" }));
    assert!(!signed_in.to_string().contains(&key));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_says_whether_steering_joins_a_running_turn() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let init = live
        .acplb
        .client(&updates, async |cx| initialize_json(&cx).await)
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let steers = transport() == "app-server";
    assert_eq!(init["_meta"]["steering"]["supported"], steers, "{init}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_joins_the_running_turn_or_starts_one_or_asks_for_a_prompt() {
    let mut live = live_with_scenarios(&[]);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (idle_required, idle_started, during, first) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            let id = s.session_id.to_string();
            let idle_required = vendor(
                &cx,
                "_session/steering",
                json!({ "sessionId": id, "prompt": [{"type": "text", "text": "scenario:v_steered NOT-SENT"}],
                        "_meta": { "steering": { "idleBehavior": "promptRequired" } } }),
            )
            .await?;
            let idle_started = vendor(
                &cx,
                "_session/steering",
                json!({ "sessionId": id, "prompt": [{"type": "text", "text": "scenario:v_steered IDLE-TOKEN"}] }),
            )
            .await?;
            let first = cx.send_request(PromptRequest::new(s.session_id.clone(), vec!["scenario:v_long go".into()]));
            assert!(
                eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await,
                "the long turn runs its command"
            );
            let during = vendor(
                &cx,
                "_session/steering",
                json!({ "sessionId": id, "prompt": [{"type": "text", "text": "scenario:v_steered STEER-TOKEN"}] }),
            )
            .await?;
            Ok((idle_required, idle_started, during, first.block_task().await?))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(
        idle_required,
        json!({ "outcome": "promptRequired", "reason": "noRunningTurn" })
    );
    assert_eq!(
        idle_started,
        json!({ "outcome": "startedNewTurn", "stopReason": "end_turn" })
    );
    assert_end_turn(&first.stop_reason);
    let bodies: Vec<String> = live.mock.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        !bodies.iter().any(|b| b.contains("NOT-SENT")),
        "a refused steer reached the model"
    );
    assert!(
        bodies.iter().any(|b| b.contains("IDLE-TOKEN")),
        "the idle steer ran as a turn"
    );
    assert!(
        bodies.iter().any(|b| b.contains("STEER-TOKEN")),
        "the steer reached the model"
    );
    if transport() == "app-server" {
        assert_eq!(during, json!({ "outcome": "injected" }));
    } else {
        // exec cannot join a running turn: the prompt runs as the next turn.
        assert_eq!(
            during,
            json!({ "outcome": "startedNewTurn", "stopReason": "end_turn" })
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_hooks_list_and_trust_answer_as_the_peer_and_the_hook_then_runs() {
    let mut live = Live::start();
    let marker = live.workspace().parent().unwrap().join("hook-ran");
    add_marker_hook(&live.env.home(), &marker);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let w = ws.to_string_lossy().into_owned();
    let (before, trusted, after) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let before = vendor(&cx, "_codex/hooks/list", json!({ "cwd": w })).await?;
            let hook = &before["hooks"][0];
            let seen = json!([{ "key": hook["key"], "currentHash": hook["currentHash"] }]);
            let trusted = vendor(&cx, "_codex/hooks/trust", json!({ "cwd": w, "hooks": seen })).await?;
            let after = vendor(&cx, "_codex/hooks/list", json!({ "cwd": w })).await?;
            let (_, s) = open_session(&cx, &ws).await?;
            assert_end_turn(
                &prompt(&cx, &s.session_id, "scenario:plain after trust")
                    .await?
                    .stop_reason,
            );
            Ok((before, trusted, after))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(before["hooks"][0]["trustStatus"], "untrusted", "{before}");
    assert_eq!(before["hooks"][0]["eventName"], "userPromptSubmit", "{before}");
    assert_eq!(trusted, json!({ "trusted": true }));
    assert_eq!(after["hooks"][0]["trustStatus"], "trusted", "{after}");
    assert!(
        eventually(Duration::from_secs(10), || marker.exists()).await,
        "the trusted hook ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_task_stop_stops_a_background_terminal_by_its_tool_call_id() {
    let mut live = crate::background::live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (first, again, pid) = live
        .acplb
        .client(&updates, async |cx| {
            let id: SessionId = open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(&prompt(&cx, &id, "scenario:background go").await?.stop_reason);
            let (call, _) = command_updates(&updates);
            let task = call["toolCallId"].as_str().unwrap_or_default().to_owned();
            updates.clear();
            assert_end_turn(&prompt(&cx, &id, "/terminals").await?.stop_reason);
            let (_, pid) = listed(&updates.agent_text()).unwrap_or_default();
            assert!(alive(pid), "{}", updates.agent_text());
            let params = json!({ "sessionId": id.to_string(), "asyncTaskId": task });
            let first = vendor(&cx, "_session/async_task/stop", params.clone()).await?;
            let gone = eventually(Duration::from_secs(10), || !alive(pid)).await;
            assert!(gone, "pid {pid} still runs after the stop");
            let again = vendor(&cx, "_session/async_task/stop", params).await?;
            Ok((first, again, pid))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, json!({ "stopped": true }));
    assert_eq!(
        again,
        json!({ "stopped": false }),
        "a stopped task is not stopped twice"
    );
    assert!(!alive(pid));
}

/// The `_session/list/changes` of subscription `id` received so far.
fn list_changes(notes: &std::sync::Mutex<Vec<(String, Value)>>, id: &str) -> Vec<Value> {
    notes
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p)| m == "_session/list/changes" && p["subscriptionId"] == id)
        .map(|(_, p)| p.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_list_subscription_is_told_of_new_renamed_and_archived_sessions() {
    let mut live = Live::start();
    let ws = live.workspace();
    let w = ws.to_string_lossy().into_owned();
    let updates = live.updates.clone();
    let notes = live.acplb.vendor_notes.clone();
    let seen = notes.clone();
    let (sub, session, after_unsubscribe) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let answer = vendor(&cx, "_session/list/subscribe", json!({ "cwd": w })).await?;
            let sub = answer["subscriptionId"].as_str().unwrap_or_default().to_owned();
            let has = |what: &dyn Fn(&Value) -> bool| list_changes(&seen, &sub).iter().any(what);
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id.to_string();
            assert_end_turn(
                &prompt(&cx, &s.session_id, "scenario:plain hello")
                    .await?
                    .stop_reason,
            );
            let row_of = |c: &Value| {
                c["sessions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["sessionId"] == id.as_str())
            };
            assert!(
                eventually(Duration::from_secs(10), || has(&row_of)).await,
                "the new session's row came"
            );
            vendor(
                &cx,
                "_session/rename",
                json!({ "sessionId": id, "title": "Watched" }),
            )
            .await?;
            let titled = |c: &Value| {
                c["sessions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["title"] == "Watched")
            };
            assert!(
                eventually(Duration::from_secs(10), || has(&titled)).await,
                "the new title came"
            );
            vendor(&cx, "_session/archive", json!({ "sessionId": id })).await?;
            let removed = |c: &Value| {
                c["removed"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r == id.as_str())
            };
            assert!(
                eventually(Duration::from_secs(10), || has(&removed)).await,
                "the archived session was removed"
            );
            assert_eq!(
                vendor(&cx, "_session/list/unsubscribe", json!({ "subscriptionId": sub })).await?,
                json!({})
            );
            let count = list_changes(&seen, &sub).len();
            vendor(&cx, "_session/unarchive", json!({ "sessionId": id })).await?;
            // The registry settles and is read within a second; nothing more comes for it.
            let more = eventually(Duration::from_secs(2), || list_changes(&seen, &sub).len() > count).await;
            Ok((sub, id, more))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(!sub.is_empty());
    assert!(!session.is_empty());
    assert!(
        !after_unsubscribe,
        "changes came after unsubscribing: {:?}",
        notes.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_is_told_which_air_extensions_acplb_answers_and_others_are_not() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let mut air = serde_json::Map::new();
    air.insert("jetbrains".into(), json!({ "air": { "version": 1 } }));
    let init = |caps: ClientCapabilities| {
        async move |cx: ConnectionTo<Agent>| {
            let answer = cx
                .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            Ok(serde_json::to_value(answer).unwrap())
        }
    };
    let for_air = live
        .acplb
        .client(&updates, init(ClientCapabilities::new().meta(air)))
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    live.respawn();
    let for_others = live
        .acplb
        .client(&updates, init(ClientCapabilities::new()))
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let listed = &for_air["_meta"]["jetbrains"]["air"]["capabilities"];
    for capability in [
        "codexHooks",
        "sessionBatchGet",
        "sessionArchive",
        "sessionRename",
        "sessionListSubscribe",
    ] {
        assert!(
            listed.as_array().into_iter().flatten().any(|c| c == capability),
            "{for_air}"
        );
    }
    let goal = &for_air["_meta"]["jetbrains"]["air"]["goal"];
    if transport() == "app-server" {
        assert_eq!(goal["controlMethod"], "_session/goal", "{for_air}");
    } else {
        assert!(goal.is_null(), "exec offers no goals: {for_air}");
    }
    assert!(for_others["_meta"].get("jetbrains").is_none(), "{for_others}");
}
