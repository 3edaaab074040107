//! Background terminals on the app-server transport (ADR 0041): a command Codex leaves running
//! when its tool call returns (`scenario:background`: `exec_command` with a 300 ms yield) stays
//! an open tool call that says so, `/terminals` lists it with its pid, `/terminals stop <id>`
//! ends it (the OS process is gone), and its tool call ends when the process does, between
//! turns; a closed session's commands are stopped.

use std::time::Duration;

use std::path::Path;

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CloseSessionRequest, InitializeRequest, NewSessionRequest, SessionId,
};
use agent_client_protocol::{Agent, Error};
use serde_json::{Value, json};

use crate::harness::{Updates, eventually, prompt};
use crate::live::{Live, assert_end_turn, set_mode};
use crate::terminal_output::caps;

/// acplb on app-server, whatever `ACPLB_TRANSPORT` says (the feature is app-server's).
pub(crate) fn live() -> Live {
    Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[])
}

/// `initialize` with `caps`, then a session in `full-access` (its commands run unsandboxed).
pub(crate) async fn open(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    caps: ClientCapabilities,
) -> Result<SessionId, Error> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
        .block_task()
        .await?;
    let session = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?;
    set_mode(cx, &session.session_id, "full-access").await?;
    Ok(session.session_id)
}

/// The first terminal `/terminals` listed: its id and OS pid.
pub(crate) fn listed(text: &str) -> Option<(String, u32)> {
    let line = text.lines().find(|l| l.starts_with("- `"))?;
    let id = line.strip_prefix("- `")?.split('`').next()?.to_owned();
    let pid = line.split("(pid ").nth(1)?.split(',').next()?.parse().ok()?;
    // Listed from the environment acplb found it by: the command's own shell or program.
    Some((id, pid))
}

/// Whether `pid` runs (a zombie has ended).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The updates of the background command's tool call (its first `tool_call` is `sleep`'s or
/// `echo`'s, per scenario), in order.
pub(crate) fn command_updates(updates: &Updates) -> (Value, Vec<Value>) {
    let all = updates.json();
    let call = all
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "execute")
        .cloned()
        .unwrap_or(Value::Null);
    let id = call["toolCallId"].clone();
    let later = all
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == id)
        .collect();
    (call, later)
}

/// Whether an update ends the call.
fn ends(update: &Value) -> bool {
    matches!(update["status"].as_str(), Some("completed" | "failed"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_command_is_listed_and_stopped_and_its_call_ends() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (noted, listing, pid, stopped, after) = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(&prompt(&cx, id, "scenario:background go").await?.stop_reason);
            let (_, calls) = command_updates(&updates);
            let noted = calls.iter().any(|u| {
                u["content"]
                    .to_string()
                    .contains("Runs in the background as process")
            }) && !calls.iter().any(ends);
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/terminals").await?.stop_reason);
            let listing = updates.agent_text();
            let (terminal, pid) = listed(&listing).unwrap_or_default();
            let running = alive(pid);
            assert!(running, "pid {pid} runs: {listing}");
            assert_end_turn(
                &prompt(&cx, id, &format!("/terminals stop {terminal}"))
                    .await?
                    .stop_reason,
            );
            let stopped = updates.agent_text();
            let gone = eventually(Duration::from_secs(10), || !alive(pid)).await;
            assert!(gone, "pid {pid} still runs after the stop");
            // The call's end comes between turns, when Codex saw the process end.
            let ended = eventually(Duration::from_secs(10), || {
                updates
                    .json()
                    .iter()
                    .any(|u| u["sessionUpdate"] == "tool_call_update" && ends(u))
            })
            .await;
            assert!(ended, "the call ended: {:?}", updates.json());
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/terminals").await?.stop_reason);
            Ok((noted, listing, pid, stopped, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(noted, "the call says it runs on and stays open");
    assert!(
        listing.contains("sleep 30") && listing.contains(&format!("(pid {pid}, in `")),
        "{listing}"
    );
    assert!(stopped.contains("Stopped process "), "{stopped}");
    assert!(after.contains("None is running."), "{after}");
    assert_eq!(
        live.mock.requests().len(),
        2,
        "the slash commands never reach the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_keeps_streaming_after_its_turn_and_ends_with_its_exit_code() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let caps = caps(json!({"terminal_output": true}));
    let ended = live
        .acplb
        .client(&updates, async |cx| {
            let id = open(&cx, &cwd, caps).await?;
            let answer = prompt(&cx, &id, "scenario:background_short go").await?;
            assert_end_turn(&answer.stop_reason);
            Ok(eventually(Duration::from_secs(15), || {
                command_updates(&updates).1.iter().any(ends)
            })
            .await)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        ended,
        "the command ended by itself: {:?}\n{}",
        live.updates.json(),
        live.acplb.stderr()
    );
    let (call, later) = command_updates(&live.updates);
    let streamed: String = later
        .iter()
        .filter_map(|u| u["_meta"]["terminal_output"]["data"].as_str())
        .collect();
    assert!(call["content"][0]["type"] == "terminal", "{call}");
    assert!(
        streamed.contains("early") && streamed.contains("late"),
        "{streamed:?}"
    );
    let last = later.last().unwrap();
    assert_eq!(last["status"], "failed", "{last}");
    assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 3, "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_session_stops_its_background_terminals() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let pid = live
        .acplb
        .client(&updates, async |cx| {
            let id = &open(&cx, &cwd, ClientCapabilities::new()).await?;
            assert_end_turn(&prompt(&cx, id, "scenario:background go").await?.stop_reason);
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/terminals").await?.stop_reason);
            let (_, pid) = listed(&updates.agent_text()).unwrap_or_default();
            assert!(alive(pid), "{}", updates.agent_text());
            cx.send_request(CloseSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            // acplb goes on serving (another session could still run).
            let gone = eventually(Duration::from_secs(10), || !alive(pid)).await;
            assert!(gone, "pid {pid} outlived its session");
            Ok(pid)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(!alive(pid));
}
