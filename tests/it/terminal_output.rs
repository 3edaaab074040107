//! Zed's live terminals (ADR 0033): a client advertising `_meta.terminal_output` sees each
//! command as a terminal whose output arrives through `_meta.terminal_output` (only the new
//! bytes) and ends with `_meta.terminal_exit`; other clients keep text content, sent without
//! re-sending long output for every piece. Both transports.

use std::fmt::Write as _;

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, InitializeRequest, LoadSessionRequest, Meta, NewSessionRequest, PermissionOptionKind,
    PromptRequest, PromptResponse, SessionId, StopReason,
};
use serde_json::{Value, json};

use crate::harness::{Answer, transport};
use crate::live::{Live, set_mode};

pub(crate) const SCENARIOS: &str = r#"
[scenarios.lines]
[[scenarios.lines.steps]]
actions = [{ type = "exec", cmd = "for i in $(seq 1 2000); do echo \"line $i of the output\"; [ $((i % 20)) = 0 ] && sleep 0.01; done; true", yield_time_ms = 20000 }]
[[scenarios.lines.steps]]
actions = [{ type = "message", text = "printed the lines" }]

[scenarios.exits]
[[scenarios.exits.steps]]
actions = [{ type = "exec", cmd = "echo some output; exit 7", yield_time_ms = 10000 }]
[[scenarios.exits.steps]]
actions = [{ type = "message", text = "it failed" }]
"#;

/// The mock model with the built-in scenarios and `more`.
pub(crate) fn live_with(more: &str) -> Live {
    let script = Script::builtin()
        .layered_with(Script::from_toml_str(SCENARIOS, "terminal-output").unwrap())
        .layered_with(Script::from_toml_str(more, "terminal-output-more").unwrap());
    Live::start_with(MockConfig::default().with_script(script), &[], &[])
}

/// Client capabilities with `meta` as their `_meta` (none for `Value::Null`).
pub(crate) fn caps(meta: Value) -> ClientCapabilities {
    match meta {
        Value::Object(map) => ClientCapabilities::new().meta(map as Meta),
        _ => ClientCapabilities::new(),
    }
}

/// `initialize` with `caps`, a session in `mode`, one prompt; the session and the answer.
pub(crate) async fn turn(
    live: &mut Live,
    caps: ClientCapabilities,
    mode: &str,
    text: &str,
) -> (SessionId, PromptResponse) {
    let ws = live.workspace();
    let updates = live.updates.clone();
    let text = text.to_owned();
    live.acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            set_mode(&cx, &s.session_id, mode).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec![text.into()]);
            let answer = cx.send_request(request).block_task().await?;
            Ok((s.session_id, answer))
        })
        .await
        .expect("the ACP session runs")
}

/// The one command's tool call and every update of it, as JSON.
pub(crate) fn command_updates(updates: &[Value]) -> (Value, Vec<Value>) {
    let calls: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 1, "one tool call: {calls:?}");
    let call = calls[0].clone();
    let rest = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call["toolCallId"])
        .cloned()
        .collect();
    (call, rest)
}

/// Every `_meta.terminal_output.data` of `updates`, in order.
pub(crate) fn terminal_pieces(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .filter_map(|u| u["_meta"]["terminal_output"]["data"].as_str())
        .map(str::to_owned)
        .collect()
}

/// What the terminal shows in the end: the pieces after the last reset (acplb resets it when
/// Codex did not stream all the output, ADR 0033).
pub(crate) fn terminal_text(updates: &[Value]) -> String {
    let all = terminal_pieces(updates).concat();
    match all.rfind("\u{1b}c") {
        Some(at) => all[at + 2..].to_owned(),
        None => all,
    }
}

/// Checks `call` is shown as a terminal; returns its id.
pub(crate) fn assert_terminal(call: &Value) -> String {
    let id = call["toolCallId"].as_str().unwrap().to_owned();
    assert_eq!(call["content"][0]["type"], "terminal", "{call}");
    assert_eq!(call["content"][0]["terminalId"], id.as_str(), "{call}");
    assert_eq!(
        call["_meta"]["terminal_info"]["terminal_id"],
        id.as_str(),
        "{call}"
    );
    assert!(call["_meta"]["terminal_info"]["cwd"].is_string(), "{call}");
    id
}

/// Bytes of the updates' JSON.
fn bytes(updates: &[Value]) -> usize {
    updates.iter().map(|u| u.to_string().len()).sum()
}

/// What the `lines` scenario prints.
fn lines() -> String {
    let mut all = String::new();
    for i in 1..=2000 {
        writeln!(all, "line {i} of the output").unwrap();
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_client_gets_the_output_once_through_terminal_meta_and_the_exit() {
    let mut live = live_with("");
    let caps = caps(json!({"terminal_output": true}));
    let (_, answer) = turn(&mut live, caps, "read-only", "scenario:lines go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (call, updates) = command_updates(&live.updates.json());
    let id = assert_terminal(&call);
    let pieces = terminal_pieces(&updates);
    let expected = lines();
    assert_eq!(terminal_text(&updates), expected);
    let sent: usize = pieces.iter().map(String::len).sum();
    // Once, plus once more at most where Codex did not stream the start (ADR 0033).
    assert!(
        sent <= 2 * expected.len() + 2,
        "{sent} bytes of data for {}",
        expected.len()
    );
    let last = updates.last().expect("a final update");
    assert_eq!(last["status"], "completed", "{last}");
    assert_eq!(last["_meta"]["terminal_exit"]["terminal_id"], id.as_str());
    assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 0, "{last}");
    for update in &updates {
        let text = update["content"].to_string();
        assert!(!text.contains("line 1999"), "no output as text content: {update}");
    }
    // What the same deltas cost as text content sent whole on each (acplb before ADR 0033).
    let mut so_far = 0;
    let whole_each_time: usize = pieces
        .iter()
        .map(|p| {
            so_far += p.len();
            so_far
        })
        .sum();
    eprintln!(
        "terminal, {}: {} output bytes in {} pieces; {} bytes of updates (whole output on each piece: {whole_each_time} bytes of output)",
        transport(),
        expected.len(),
        pieces.len(),
        bytes(&updates)
    );
    assert_eq!(live.updates.agent_text(), "printed the lines");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_client_sees_a_failed_exit_code() {
    let mut live = live_with("");
    let caps = caps(json!({"terminal_output": true}));
    let (_, answer) = turn(&mut live, caps, "read-only", "scenario:exits go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (call, updates) = command_updates(&live.updates.json());
    assert_terminal(&call);
    assert_eq!(terminal_text(&updates), "some output\n");
    let last = updates.last().unwrap();
    assert_eq!(last["status"], "failed", "{last}");
    assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 7, "{last}");
    assert_eq!(last["rawOutput"]["exit_code"], 7, "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_app_server_a_terminal_streams_before_the_command_ends() {
    if transport() == "exec" {
        // exec reports a command's output only when it ended (ADR 0033).
        return;
    }
    let mut live = live_with("");
    let caps = caps(json!({"terminal_output": true}));
    let (_, answer) = turn(&mut live, caps, "full-access", "scenario:stream_shell go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (_, updates) = command_updates(&live.updates.json());
    let first = updates
        .iter()
        .position(|u| u["_meta"]["terminal_output"]["data"] == "first line\n")
        .expect("the first line alone, as it came");
    let done = updates.iter().position(|u| u["status"] == "completed").unwrap();
    assert!(first < done, "{updates:?}");
    assert_eq!(terminal_pieces(&updates).concat(), "first line\nsecond line\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_client_keeps_text_content_without_resending_it_on_every_piece() {
    let mut live = live_with("");
    let (_, answer) = turn(&mut live, caps(Value::Null), "read-only", "scenario:lines go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (call, updates) = command_updates(&live.updates.json());
    assert!(call.get("_meta").is_none_or(Value::is_null), "{call}");
    assert!(call["content"].as_array().is_none_or(Vec::is_empty), "{call}");
    let last = updates.last().unwrap();
    assert_eq!(last["status"], "completed");
    let text = last["content"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(text, format!("```\n{}```", lines()));
    assert!(updates.iter().all(|u| u.get("_meta").is_none_or(Value::is_null)));
    let output = lines().len();
    let sent = bytes(&updates);
    eprintln!(
        "text, {}: {output} output bytes; {} updates, {sent} bytes of updates",
        transport(),
        updates.len()
    );
    assert!(
        sent < 4 * output + 4096,
        "{sent} bytes sent for {output} of output"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_terminal_session_replays_its_terminal_and_a_text_client_its_text() {
    let mut live = live_with("");
    let caps_on = caps(json!({"terminal_output": true}));
    let (id, answer) = turn(&mut live, caps_on.clone(), "read-only", "scenario:exits go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    let ws = live.workspace();
    for (caps, terminal) in [(caps_on, true), (caps(Value::Null), false)] {
        live.respawn();
        let updates = live.updates.clone();
        let session = id.clone();
        live.acplb
            .client(&updates, async |cx| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                    .block_task()
                    .await?;
                cx.send_request(LoadSessionRequest::new(session, &ws))
                    .block_task()
                    .await
            })
            .await
            .expect("the session loads");
        let (call, updates) = command_updates(&live.updates.json());
        let last = updates.last().unwrap();
        assert_eq!(last["status"], "failed", "{last}");
        if terminal {
            assert_terminal(&call);
            assert_eq!(terminal_text(&updates), "some output\n");
            assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 7, "{last}");
        } else {
            let all = format!("{call}{updates:?}");
            assert!(!all.contains("terminal"), "no terminal for a text client: {all}");
            let text = last["content"][0]["content"]["text"].as_str().unwrap();
            assert_eq!(text, "```\nsome output\n```", "{last}");
        }
        live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_for_a_terminal_command_shows_the_command_not_the_terminal() {
    if transport() == "exec" {
        // exec never asks (ADR 0011).
        return;
    }
    let mut live = live_with("");
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::AllowOnce));
    let caps = caps(json!({"terminal_output": true}));
    let (_, answer) = turn(&mut live, caps, "read-only", "scenario:escalate please").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let asked = live.acplb.permissions.seen();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let shown = asked[0]["toolCall"].to_string();
    assert!(shown.contains("echo escalated-ok"), "{shown}");
    assert!(!shown.contains("terminal"), "{shown}");
    let (call, updates) = command_updates(&live.updates.json());
    assert_terminal(&call);
    assert_eq!(terminal_text(&updates), "escalated-ok\n");
}
