//! ACP protocol v2 (ADR 0048), end to end: the SDK's own v2 client over acplb's stdio, the
//! real Codex and the mock model, on the transport of this run. Every session update the
//! client receives must parse as v2's; the turn ends by a `state_update`, not by the prompt's
//! answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v2::schema::{
    CancelledPermissionOutcome, ClientCapabilities, Implementation, InitializeRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    UpdateSessionNotification,
};
use agent_client_protocol::v2::{ConnectionTo, InitializeOutcome};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, UntypedMessage};
use agent_client_protocol::{on_receive_notification, on_receive_request};
use serde_json::{Value, json};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use acplb_playback::mock_model::MockConfig;

use crate::harness::{Acplb, eventually, transport};
use crate::live::Live;
use crate::login::{key_meta, needs_openai_sign_in, test_key};
use crate::plan_mode::question_output;

/// What the v2 client saw.
#[derive(Clone, Default)]
pub(crate) struct Seen {
    /// Every `session/update`'s `update`, in order.
    pub updates: Arc<Mutex<Vec<Value>>>,
    /// The same, each with the session it is for.
    pub addressed: Arc<Mutex<Vec<(String, Value)>>>,
    /// Every `session/update` that did not parse as v2's, with the reason.
    pub malformed: Arc<Mutex<Vec<String>>>,
    /// Every permission request, as sent.
    pub asked: Arc<Mutex<Vec<Value>>>,
    /// Every `elicitation/create`, as sent.
    pub forms: Arc<Mutex<Vec<Value>>>,
    /// The answer to every form (none: declined).
    pub form_answer: Arc<Mutex<Option<Value>>>,
}

impl Seen {
    pub fn updates(&self) -> Vec<Value> {
        self.updates.lock().unwrap().clone()
    }

    pub fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// Where the first update of `kind` came, among all.
    pub fn first(&self, kind: &str) -> Option<usize> {
        self.updates().iter().position(|u| u["sessionUpdate"] == kind)
    }

    /// Where the last update of `kind` came, among all.
    pub fn last(&self, kind: &str) -> Option<usize> {
        self.updates().iter().rposition(|u| u["sessionUpdate"] == kind)
    }

    /// The states in order (`running`, `idle`, ...).
    pub fn states(&self) -> Vec<String> {
        self.of_kind("state_update")
            .iter()
            .map(|u| u["state"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    pub fn agent_text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .iter()
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
            .collect()
    }

    /// Waits until a `state_update` `idle` came (30 s at most); it.
    pub async fn idle(&self) -> Value {
        let idle = || {
            self.of_kind("state_update")
                .into_iter()
                .rfind(|u| u["state"] == "idle")
        };
        assert!(
            eventually(Duration::from_secs(30), || idle().is_some()).await,
            "never idle: {:?}",
            self.updates()
        );
        idle().unwrap()
    }

    pub fn assert_all_v2(&self) {
        let bad = self.malformed.lock().unwrap().clone();
        assert!(bad.is_empty(), "updates that are not v2's: {bad:?}");
    }
}

/// Runs `main` as a v2 client on `acplb`'s stdio (permission requests answered with the first
/// option that allows); when `main` returns the client closes acplb's stdin.
pub(crate) async fn v2_client<R: Send + 'static>(
    acplb: &mut Acplb,
    seen: &Seen,
    main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, Error>,
) -> Result<R, Error> {
    let stdin = acplb.child.stdin.take().expect("stdin not taken yet");
    let stdout = acplb.child.stdout.take().expect("stdout not taken yet");
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let (notes, asks, forms) = (seen.clone(), seen.clone(), seen.clone());
    Client
        .v2()
        .name("acplb-e2e-v2")
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: agent_client_protocol::v2::Responder<RequestPermissionResponse>,
                        _cx| {
                asks.asked
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&req).unwrap());
                let allow = req.options.iter().find(|o| {
                    serde_json::to_value(&o.kind)
                        .is_ok_and(|k| k.as_str().is_some_and(|k| k.starts_with("allow")))
                });
                responder.respond(RequestPermissionResponse::new(match allow {
                    Some(o) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        o.option_id.clone(),
                    )),
                    None => RequestPermissionOutcome::Cancelled(CancelledPermissionOutcome::new()),
                }))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: UntypedMessage, responder: agent_client_protocol::v2::Responder<Value>, _cx| {
                if r.method() != "elicitation/create" {
                    return responder.respond_with_error(Error::method_not_found());
                }
                forms.forms.lock().unwrap().push(r.params().clone());
                let answer = forms.form_answer.lock().unwrap().clone();
                responder.respond(match answer {
                    Some(content) => json!({"action": "accept", "content": content}),
                    None => json!({"action": "decline"}),
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: UntypedMessage, _cx| {
                if n.method() == "session/update" {
                    match serde_json::from_value::<UpdateSessionNotification>(n.params().clone()) {
                        Ok(_) => {
                            let update = n.params()["update"].clone();
                            let session = n.params()["sessionId"].as_str().unwrap_or_default().to_owned();
                            notes.addressed.lock().unwrap().push((session, update.clone()));
                            notes.updates.lock().unwrap().push(update);
                        }
                        Err(e) => notes
                            .malformed
                            .lock()
                            .unwrap()
                            .push(format!("{e}: {}", n.params())),
                    }
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_with(transport, main)
        .await
}

/// `initialize` asking for v2; its answer.
pub(crate) async fn initialize(cx: &ConnectionTo<Agent>) -> Result<Value, Error> {
    initialize_with(cx, json!({})).await
}

/// `initialize` asking for v2 with the client capabilities `caps`; its answer.
pub(crate) async fn initialize_with(cx: &ConnectionTo<Agent>, caps: Value) -> Result<Value, Error> {
    let request = InitializeRequest::new(ProtocolVersion::V2, Implementation::new("acplb-e2e-v2", "1"))
        .capabilities(serde_json::from_value::<ClientCapabilities>(caps).unwrap());
    match cx.send_initialize(request).block_task().await? {
        InitializeOutcome::Initialized(r) => Ok(serde_json::to_value(r).unwrap()),
        other => panic!("acplb did not choose v2: {other:?}"),
    }
}

/// Sends the request `method` with `params`; its answer.
pub(crate) async fn call(cx: &ConnectionTo<Agent>, method: &str, params: Value) -> Result<Value, Error> {
    cx.send_request(UntypedMessage::new(method, params)?)
        .block_task()
        .await
}

/// `session/new` in `cwd` with the mode set to `mode`; the session id.
pub(crate) async fn open(
    cx: &ConnectionTo<Agent>,
    cwd: &std::path::Path,
    mode: &str,
) -> Result<String, Error> {
    let s = call(cx, "session/new", json!({"cwd": cwd, "mcpServers": []})).await?;
    let id = s["sessionId"].as_str().unwrap().to_owned();
    let set = json!({"sessionId": id, "configId": "mode", "type": "id", "value": mode});
    let options = call(cx, "session/set_config_option", set).await?;
    let current = options["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["configId"] == "mode")
        .map(|o| o["currentValue"].clone());
    assert_eq!(current, Some(json!(mode)), "{options}");
    Ok(id)
}

/// Sends `session/prompt` with one text block; the prompt's answer (the turn goes on).
pub(crate) async fn send_prompt(cx: &ConnectionTo<Agent>, id: &str, text: &str) -> Result<Value, Error> {
    let params = json!({"sessionId": id, "prompt": [{"type": "text", "text": text}]});
    call(cx, "session/prompt", params).await
}

/// A v2 client on `live` that opens a session in `mode` and runs one turn of `text` to its end;
/// what it saw.
async fn one_turn(live: &mut Live, mode: &str, text: &str) -> Seen {
    let ws = live.workspace();
    let seen = Seen::default();
    v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, mode).await?;
        send_prompt(&cx, &id, text).await?;
        seen.idle().await;
        Ok(())
    })
    .await
    .unwrap();
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_client_prompts_and_the_turn_ends_by_state_update() {
    let mut live = Live::start();
    let ws = live.workspace();
    let seen = Seen::default();
    let (init, new, answered) = v2_client(&mut live.acplb, &seen, async |cx| {
        let init = initialize(&cx).await?;
        let new = call(&cx, "session/new", json!({"cwd": ws, "mcpServers": []})).await?;
        let id = new["sessionId"].as_str().unwrap().to_owned();
        let answered = send_prompt(&cx, &id, "scenario:plain hi").await?;
        seen.idle().await;
        Ok((init, new, answered))
    })
    .await
    .unwrap();
    assert_eq!(init["protocolVersion"], 2);
    assert_eq!(init["info"]["name"], "acplb");
    assert!(init["capabilities"]["session"]["delete"].is_object(), "{init}");
    assert!(!init["authMethods"].as_array().unwrap().is_empty(), "{init}");
    assert!(new.get("modes").is_none(), "v2 has no modes: {new}");
    assert!(
        new["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["configId"] == "mode"),
        "{new}"
    );
    let message = answered["messageId"]
        .as_str()
        .expect("the prompt's answer names its message");
    seen.assert_all_v2();
    assert_eq!(seen.states(), ["running", "idle"], "{:?}", seen.updates());
    assert_eq!(seen.idle().await["stopReason"], "end_turn");
    let echoed = seen.of_kind("user_message_chunk");
    assert!(
        echoed.iter().any(|u| u["messageId"] == message),
        "the prompt is echoed with its id: {echoed:?}"
    );
    assert!(
        seen.agent_text().contains("I am the mock model"),
        "{}",
        seen.agent_text()
    );
    let chunks = seen.of_kind("agent_message_chunk");
    assert!(
        chunks
            .iter()
            .all(|c| c["messageId"].as_str().is_some_and(|m| !m.is_empty()))
    );
    let idle_at = seen.last("state_update").unwrap();
    let last_chunk = seen.last("agent_message_chunk").unwrap();
    assert!(last_chunk < idle_at, "the answer comes before the turn's end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_is_a_tool_call_upsert_with_a_v2_terminal() {
    let seen = one_turn(&mut Live::start(), "full-access", "scenario:shell list").await;
    seen.assert_all_v2();
    assert!(seen.of_kind("tool_call").is_empty(), "v2 has no separate create");
    let calls = seen.of_kind("tool_call_update");
    assert!(calls.iter().any(|c| c["status"] == "completed"), "{calls:?}");
    let terminals = seen.of_kind("terminal_update");
    let id = calls
        .iter()
        .find_map(|c| c["content"][0]["terminalId"].as_str())
        .expect("the call shows a terminal");
    assert!(
        terminals
            .iter()
            .any(|t| t["terminalId"] == id && t["command"].is_string()),
        "{terminals:?}"
    );
    assert!(
        terminals
            .iter()
            .any(|t| t["terminalId"] == id && t["exitStatus"].is_object()),
        "{terminals:?}"
    );
    let first_terminal = seen.first("terminal_update").unwrap();
    let first_call = seen.first("tool_call_update").unwrap();
    assert!(
        first_terminal < first_call,
        "the terminal exists before the call names it"
    );
    assert!(
        !seen.of_kind("terminal_output_chunk").is_empty(),
        "the command's output streams"
    );
    assert!(
        seen.of_kind("state_update")
            .iter()
            .all(|u| u.get("background").is_none()),
        "a command that ended in its turn is no background work"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_replays_from_the_start_and_snapshots_the_state() {
    let mut live = Live::start();
    let ws = live.workspace();
    let seen = Seen::default();
    let id = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "read-only").await?;
        send_prompt(&cx, &id, "scenario:plain remember me").await?;
        seen.idle().await;
        call(&cx, "session/close", json!({"sessionId": id})).await?;
        Ok(id)
    })
    .await
    .unwrap();
    live.respawn();
    let again = Seen::default();
    let (resumed, deleted) = v2_client(&mut live.acplb, &again, async |cx| {
        initialize(&cx).await?;
        let resumed = call(
            &cx,
            "session/resume",
            json!({"sessionId": id, "cwd": ws, "replayFrom": {"type": "start"}}),
        )
        .await?;
        let deleted = call(&cx, "session/delete", json!({"sessionId": id})).await?;
        Ok((resumed, deleted))
    })
    .await
    .unwrap();
    again.assert_all_v2();
    assert!(
        resumed["configOptions"].as_array().is_some_and(|o| !o.is_empty()),
        "{resumed}"
    );
    assert_eq!(deleted, json!({}));
    let users: String = again
        .of_kind("user_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect();
    assert!(
        users.contains("remember me"),
        "the history is replayed: {:?}",
        again.updates()
    );
    let all = again.updates();
    let state = again.first("state_update").expect("a state snapshot");
    let replayed = all
        .iter()
        .rposition(|u| u["sessionUpdate"].as_str().is_some_and(|k| k.ends_with("_chunk")));
    assert!(
        replayed < Some(state),
        "the snapshot comes after the replay: {all:?}"
    );
    assert_eq!(all[state]["state"], "idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_needs_approval_makes_the_session_require_action() {
    if transport() == "exec" {
        // `codex exec` asks for no approvals: the exec transport has nothing to wait on.
        return;
    }
    let seen = one_turn(&mut Live::start(), "read-only", "scenario:escalate please").await;
    seen.assert_all_v2();
    let asked = seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]["title"].as_str().is_some_and(|t| !t.is_empty()),
        "{}",
        asked[0]
    );
    assert_eq!(asked[0]["subject"]["type"], "tool_call");
    assert_eq!(seen.states(), ["running", "requires_action", "running", "idle"]);
    assert!(
        seen.agent_text().contains("escalated-ok"),
        "{}",
        seen.agent_text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_turn_ends_in_an_error_state_and_auth_login_signs_in() {
    let mut live = Live::start();
    needs_openai_sign_in(&live.env.home());
    let (ws, home, key) = (live.workspace(), live.env.home(), test_key());
    let seen = Seen::default();
    let (init, before, after, out) = v2_client(&mut live.acplb, &seen, async |cx| {
        let init = initialize(&cx).await?;
        let id = open(&cx, &ws, "read-only").await?;
        // The model refuses the request (401): the turn fails after the prompt was answered.
        send_prompt(&cx, &id, "scenario:http401 hello").await?;
        let before = seen.idle().await;
        seen.updates.lock().unwrap().clear();
        call(
            &cx,
            "auth/login",
            json!({"methodId": "api-key", "_meta": key_meta(&key)}),
        )
        .await?;
        assert!(
            std::fs::read_to_string(home.join("auth.json"))
                .unwrap()
                .contains(&key)
        );
        send_prompt(&cx, &id, "scenario:plain hello").await?;
        let after = seen.idle().await;
        let out = call(&cx, "auth/logout", json!({})).await?;
        Ok((init, before, after, out))
    })
    .await
    .unwrap();
    let ways: Vec<(&str, &str)> = init["authMethods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["type"].as_str().unwrap(), m["methodId"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ways,
        [("agent", "chatgpt-device-code"), ("agent", "api-key")],
        "{init}"
    );
    assert_eq!(before["stopReason"], "error", "{before}");
    assert_eq!(before["error"]["code"], -32000, "{before}");
    assert_eq!(before["error"]["data"]["reason"], "auth_required", "{before}");
    assert_eq!(after["stopReason"], "end_turn", "{after}");
    assert_eq!(out, json!({}));
    seen.assert_all_v2();
    assert!(
        !live.acplb.stderr().contains(&key),
        "the key stays out of the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_a_form_and_the_session_requires_action_until_it_is_answered() {
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[]);
    let ws = live.workspace();
    let seen = Seen::default();
    *seen.form_answer.lock().unwrap() = Some(json!({"color": "Red"}));
    v2_client(&mut live.acplb, &seen, async |cx| {
        initialize_with(&cx, json!({"elicitation": {"form": {}}})).await?;
        let id = open(&cx, &ws, "plan").await?;
        send_prompt(&cx, &id, "scenario:ask which color").await?;
        seen.idle().await;
        Ok(())
    })
    .await
    .unwrap();
    seen.assert_all_v2();
    let forms = seen.forms.lock().unwrap().clone();
    assert_eq!(forms.len(), 1, "{forms:?}");
    assert_eq!(
        forms[0]["message"],
        "Codex asks: Which color should the button be?"
    );
    assert_eq!(seen.states(), ["running", "requires_action", "running", "idle"]);
    let output = question_output(&live.mock).expect("the model got an answer");
    assert!(output.contains(r#"\"answers\":[\"Red\"]"#), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_edit_is_a_v2_diff_with_a_git_patch() {
    let seen = one_turn(&mut Live::start(), "full-access", "scenario:patch edit").await;
    seen.assert_all_v2();
    let diffs: Vec<Value> = seen
        .of_kind("tool_call_update")
        .iter()
        .filter_map(|c| c["content"].as_array().cloned())
        .flatten()
        .filter(|item| item["type"] == "diff")
        .collect();
    let change = |op: &str, file: &str| {
        diffs.iter().any(|d| {
            d["changes"][0]["operation"] == op
                && d["changes"][0]["path"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(file))
        })
    };
    assert!(change("add", "hello.txt"), "{diffs:?}");
    assert!(change("modify", "README.md"), "{diffs:?}");
    let readme = diffs
        .iter()
        .find(|d| d["changes"][0]["operation"] == "modify")
        .unwrap();
    let patch = readme["patch"]["text"].as_str().unwrap();
    assert!(
        patch.starts_with("diff --git ") && patch.contains("\n@@ ") && patch.contains("\n-# demo repo"),
        "{patch}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_on_v2_gets_its_async_tasks_under_underscored_kinds() {
    // Background terminals are app-server's.
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[]);
    let ws = live.workspace();
    let seen = Seen::default();
    let air = json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["asyncTasks"]}}}});
    let ended = || !seen.of_kind("_async_task_state_update").is_empty();
    let (task, stopped, ended) = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize_with(&cx, air).await?;
        let id = open(&cx, &ws, "full-access").await?;
        send_prompt(&cx, &id, "scenario:background go").await?;
        seen.idle().await;
        let marked = seen
            .of_kind("tool_call_update")
            .into_iter()
            .find(|u| u["_meta"]["jetbrains"]["air"]["asyncTasks"]["backgrounded"] == true)
            .unwrap_or_default();
        let task = marked["toolCallId"].as_str().unwrap_or_default().to_owned();
        let params = json!({"sessionId": id, "asyncTaskId": task});
        let stopped = call(&cx, "_session/async_task/stop", params).await?;
        Ok((task, stopped, eventually(Duration::from_secs(10), ended).await))
    })
    .await
    .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        !task.is_empty(),
        "the command is marked as backgrounded: {:?}",
        seen.updates()
    );
    assert_eq!(stopped, json!({"stopped": true}));
    assert!(ended, "the task's end came: {:?}", seen.updates());
    // AIR's own kinds are extension updates (`_`-prefixed), which v2 clients read.
    seen.assert_all_v2();
    let all = seen.updates();
    let spawned = seen.of_kind("_async_task_spawned");
    assert_eq!(spawned.len(), 1, "{all:?}");
    assert_eq!(spawned[0]["asyncTaskId"], task.as_str());
    assert_eq!(spawned[0]["taskType"], "shell");
    let at = seen.first("_async_task_spawned").unwrap();
    assert_eq!(
        all[at - 1]["toolCallId"],
        task.as_str(),
        "right after the marked call: {all:?}"
    );
    let told = seen.of_kind("_async_task_state_update");
    assert_eq!(told.len(), 1, "{all:?}");
    assert_eq!(
        told[0],
        json!({"sessionUpdate": "_async_task_state_update", "asyncTaskId": task, "state": "stopped", "toolCallId": task})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_left_running_is_background_work_until_it_exits() {
    // Background terminals are app-server's.
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[]);
    let ws = live.workspace();
    let seen = Seen::default();
    let emptied = || {
        seen.of_kind("state_update")
            .iter()
            .any(|u| u["state"] == "idle" && u["background"] == json!([]))
    };
    let (first_idle, stopped, emptied) = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "full-access").await?;
        send_prompt(&cx, &id, "scenario:background go").await?;
        let first_idle = seen.idle().await;
        let task = seen
            .of_kind("tool_call_update")
            .into_iter()
            .find_map(|u| u["toolCallId"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let params = json!({"sessionId": id, "asyncTaskId": task});
        let stopped = call(&cx, "_session/async_task/stop", params).await?;
        Ok((
            first_idle,
            stopped,
            eventually(Duration::from_secs(10), emptied).await,
        ))
    })
    .await
    .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    seen.assert_all_v2();
    let all = seen.updates();
    let terminal = first_idle["background"][0]["terminalId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        first_idle["background"],
        json!([{"type": "terminal", "terminalId": terminal}]),
        "the command runs on: {all:?}"
    );
    assert!(
        all.iter()
            .any(|u| u["sessionUpdate"] == "terminal_update" && u["terminalId"] == terminal.as_str()),
        "announced before it is listed"
    );
    assert_eq!(stopped, json!({"stopped": true}));
    assert!(emptied, "an idle without it came: {all:?}");
    let exit = all
        .iter()
        .position(|u| u["terminalId"] == terminal.as_str() && u["exitStatus"].is_object())
        .expect("its exit is reported");
    let gone = all
        .iter()
        .position(|u| u["sessionUpdate"] == "state_update" && u["background"] == json!([]))
        .unwrap();
    assert!(exit < gone, "the exit comes before the snapshot that drops it");
}
