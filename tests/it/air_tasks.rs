//! `JetBrains` AIR's async tasks (ADR 0051), end to end with the real Codex 0.169.0 and the mock
//! model on app-server (background terminals are app-server's): a client that declared
//! `asyncTasks` is sent `async_task_spawned` right after the update that marks a command as
//! backgrounded, and `async_task_state_update` right after the command's call ends:
//! `stopped` when the user stopped it, `completed` or `failed` as it exited by itself. A task is
//! announced once and ended once. Other clients get neither (`air.rs`).

use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::SessionId;
use agent_client_protocol::{Agent, Error};
use serde_json::{Value, json};

use crate::air::air;
use crate::harness::{eventually, prompt};
use crate::live::{Live, assert_end_turn};
use crate::vendor::vendor;

/// A command that outlives its tool call and exits 0 a second later.
const SCENARIOS: &str = r#"
[scenarios.task_ok]
[[scenarios.task_ok.steps]]
actions = [{ type = "exec", cmd = "echo fine; sleep 1", yield_time_ms = 300 }]
[[scenarios.task_ok.steps]]
actions = [{ type = "message", text = "Left it running: {last_output}" }]
"#;

/// acplb on app-server with the `task_ok` scenario beside the built-in ones.
pub(crate) fn live() -> Live {
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "air-tasks").unwrap());
    Live::start_with(
        MockConfig::default().with_script(script),
        &["--transport", "app-server"],
        &[],
    )
}

/// The AIR task updates received so far (`session/update`s of an `async_task_*` kind), each
/// with `seenAfter`: how many typed updates came before it.
pub(crate) fn task_notes(live: &Live) -> Vec<Value> {
    live.acplb
        .vendor_notes
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, p)| m == "session/update" && p["update"]["sessionUpdate"].is_string())
        .map(|(_, p)| p.clone())
        .collect()
}

/// The notes of `kind` about the task of call `id`.
fn of(notes: &[Value], kind: &str, id: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n["update"]["sessionUpdate"] == kind && n["update"]["toolCallId"] == id)
        .cloned()
        .collect()
}

/// The id and title of the last command call the client was shown.
fn last_command(updates: &[Value]) -> (String, String) {
    let call = updates
        .iter()
        .rev()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "execute")
        .cloned()
        .unwrap_or(Value::Null);
    (
        call["toolCallId"].as_str().unwrap_or_default().to_owned(),
        call["title"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Where the last update of call `id` that matches `what` is among the typed updates.
fn last_at(updates: &[Value], id: &str, what: impl Fn(&Value) -> bool) -> Option<usize> {
    updates
        .iter()
        .rposition(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == id && what(u))
}

/// Runs `scenario:<name> go` in session `id`; the command call it started.
async fn run(
    cx: &ConnectionTo<Agent>,
    id: &SessionId,
    name: &str,
    updates: &crate::harness::Updates,
) -> Result<(String, String), Error> {
    assert_end_turn(&prompt(cx, id, &format!("scenario:{name} go")).await?.stop_reason);
    Ok(last_command(&updates.json()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_is_told_each_background_command_as_a_task_and_how_it_ended() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let notes = live.acplb.vendor_notes.clone();
    let ended = move |call: &str| {
        let notes = notes.lock().unwrap();
        notes.iter().any(|(_, p)| {
            p["update"]["sessionUpdate"] == "async_task_state_update" && p["update"]["toolCallId"] == call
        })
    };
    let (stopped, completed, failed, stop_answer) = live
        .acplb
        .client(&updates, async |cx| {
            let id = crate::background::open(&cx, &cwd, air(&["asyncTasks"])).await?;
            let stopped = run(&cx, &id, "background", &updates).await?;
            let params = json!({ "sessionId": id.to_string(), "asyncTaskId": stopped.0 });
            let stop_answer = vendor(&cx, "_session/async_task/stop", params).await?;
            assert!(
                eventually(Duration::from_secs(10), || ended(&stopped.0)).await,
                "the stopped task's end came"
            );
            let completed = run(&cx, &id, "task_ok", &updates).await?;
            assert!(
                eventually(Duration::from_secs(15), || ended(&completed.0)).await,
                "the task that exits 0 ended"
            );
            let failed = run(&cx, &id, "background_short", &updates).await?;
            assert!(
                eventually(Duration::from_secs(15), || ended(&failed.0)).await,
                "the task that exits 3 ended"
            );
            Ok((stopped, completed, failed, stop_answer))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop_answer, json!({ "stopped": true }));
    let (notes, updates) = (task_notes(&live), live.updates.json());
    let backgrounded = |u: &Value| u["_meta"]["jetbrains"]["air"]["asyncTasks"]["backgrounded"] == true;
    let ends = |u: &Value| matches!(u["status"].as_str(), Some("completed" | "failed"));
    for ((call, title), state) in [(stopped, "stopped"), (completed, "completed"), (failed, "failed")] {
        assert!(!call.is_empty() && !title.is_empty(), "{updates:?}");
        let spawned = of(&notes, "async_task_spawned", &call);
        assert_eq!(spawned.len(), 1, "announced once: {notes:?}");
        assert_eq!(
            spawned[0]["update"],
            json!({
                "sessionUpdate": "async_task_spawned", "asyncTaskId": call, "name": title,
                "taskType": "shell", "showInTranscript": false, "canStop": true, "toolCallId": call,
            })
        );
        let marker = last_at(&updates, &call, backgrounded).expect("the call is marked");
        assert_eq!(
            spawned[0]["seenAfter"],
            marker + 1,
            "right after the mark: {updates:?}"
        );
        let told = of(&notes, "async_task_state_update", &call);
        assert_eq!(told.len(), 1, "ended once: {notes:?}");
        assert_eq!(
            told[0]["update"],
            json!({ "sessionUpdate": "async_task_state_update", "asyncTaskId": call, "state": state, "toolCallId": call })
        );
        let end = last_at(&updates, &call, ends).expect("the call ended");
        assert_eq!(
            told[0]["seenAfter"],
            end + 1,
            "right after the call's end: {updates:?}"
        );
        assert!(
            notes.iter().all(|n| n["sessionId"].is_string()),
            "each names its session: {notes:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_of_the_open_session_announces_its_running_tasks_again_after_the_replay() {
    use agent_client_protocol::v1::schema::LoadSessionRequest;

    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let notes = live.acplb.vendor_notes.clone();
    let spawned = move || {
        let notes = notes.lock().unwrap();
        notes
            .iter()
            .filter(|(_, p)| p["update"]["sessionUpdate"] == "async_task_spawned")
            .map(|(_, p)| p.clone())
            .collect::<Vec<_>>()
    };
    let (call, replayed, again) = live
        .acplb
        .client(&updates, async |cx| {
            let id = crate::background::open(&cx, &cwd, air(&["asyncTasks"])).await?;
            let (call, _) = run(&cx, &id, "background", &updates).await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &cwd))
                .block_task()
                .await?;
            let replayed = updates.json().len();
            let again = eventually(Duration::from_secs(10), || spawned().len() == 2).await;
            Ok((call, replayed, again))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let notes = task_notes(&live);
    assert!(again, "announced again: {notes:?}");
    let twice = of(&notes, "async_task_spawned", &call);
    assert_eq!(twice.len(), 2, "{notes:?}");
    assert_eq!(twice[0]["update"], twice[1]["update"], "the same announcement");
    assert!(
        twice[1]["seenAfter"].as_u64().unwrap_or_default() >= replayed as u64,
        "after the replay ({replayed} updates): {notes:?}"
    );
    assert!(
        of(&notes, "async_task_state_update", &call).is_empty(),
        "it still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_clean_ends_each_task_as_stopped() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let notes = live.acplb.vendor_notes.clone();
    let ended = move || {
        let notes = notes.lock().unwrap();
        notes
            .iter()
            .any(|(_, p)| p["update"]["sessionUpdate"] == "async_task_state_update")
    };
    let call = live
        .acplb
        .client(&updates, async |cx| {
            let id = crate::background::open(&cx, &cwd, air(&["asyncTasks"])).await?;
            let (call, _) = run(&cx, &id, "background", &updates).await?;
            assert_end_turn(&prompt(&cx, &id, "/terminals clean").await?.stop_reason);
            assert!(eventually(Duration::from_secs(10), ended).await, "the task ended");
            Ok(call)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let notes = task_notes(&live);
    let told = of(&notes, "async_task_state_update", &call);
    assert_eq!(told.len(), 1, "{notes:?}");
    assert_eq!(told[0]["update"]["state"], "stopped", "{notes:?}");
}
