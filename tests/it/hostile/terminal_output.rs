//! Zed's live terminals under bad output and bad input (ADR 0033): bytes that are not UTF-8,
//! escapes, huge output, a capability of the wrong type, a cancel while a command prints.

use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, NewSessionRequest, PromptRequest, StopReason,
};
use serde_json::json;

use crate::harness::{eventually, transport};
use crate::live::set_mode;
use crate::terminal_output::{assert_terminal, caps, command_updates, live_with, terminal_text, turn};

const SCENARIOS: &str = r#"
[scenarios.bad_bytes]
[[scenarios.bad_bytes.steps]]
actions = [{ type = "exec", cmd = "printf 'caf\\303'; sleep 0.5; printf '\\251 \\377\\376 end\\n'", yield_time_ms = 10000 }]
[[scenarios.bad_bytes.steps]]
actions = [{ type = "message", text = "bytes printed" }]

[scenarios.escapes]
[[scenarios.escapes.steps]]
actions = [{ type = "exec", cmd = "printf '\\033[31mred\\033[0m plain\\n'", yield_time_ms = 10000 }]
[[scenarios.escapes.steps]]
actions = [{ type = "message", text = "escapes printed" }]

[scenarios.huge]
[[scenarios.huge.steps]]
actions = [{ type = "exec", cmd = "seq 1 200000", yield_time_ms = 20000 }]
[[scenarios.huge.steps]]
actions = [{ type = "message", text = "huge printed" }]

[scenarios.printing]
[[scenarios.printing.steps]]
actions = [{ type = "exec", cmd = "for i in $(seq 1 300); do echo line $i; sleep 0.1; done", yield_time_ms = 60000 }]
[[scenarios.printing.steps]]
actions = [{ type = "message", text = "printing done" }]
"#;

fn terminal() -> agent_client_protocol::v1::schema::ClientCapabilities {
    caps(json!({"terminal_output": true}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_that_are_not_utf8_and_a_character_split_across_pieces_reach_the_terminal() {
    let mut live = live_with(SCENARIOS);
    let (_, answer) = turn(&mut live, terminal(), "read-only", "scenario:bad_bytes go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (call, updates) = command_updates(&live.updates.json());
    assert_terminal(&call);
    let data = terminal_text(&updates);
    assert!(data.starts_with("caf") && data.ends_with(" end\n"), "{data:?}");
    let last = updates.last().unwrap();
    assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 0, "{last}");
    assert!(
        !live.acplb.stderr().contains("panicked"),
        "{}",
        live.acplb.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_reach_the_terminal_unchanged() {
    let mut live = live_with(SCENARIOS);
    let (_, answer) = turn(&mut live, terminal(), "read-only", "scenario:escapes go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (_, updates) = command_updates(&live.updates.json());
    assert_eq!(terminal_text(&updates), "\u{1b}[31mred\u{1b}[0m plain\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_is_bounded_with_a_marker_and_its_end_kept() {
    let mut live = live_with(SCENARIOS);
    let (_, answer) = turn(&mut live, terminal(), "read-only", "scenario:huge go").await;
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let (_, updates) = command_updates(&live.updates.json());
    let data = terminal_text(&updates);
    assert!(data.starts_with("1\n2\n3\n"), "{}", &data[..40]);
    assert!(data.ends_with("199999\n200000\n"), "the end is kept");
    assert!(
        data.contains(" bytes of output omitted …]"),
        "a truncation marker"
    );
    // 64 KiB live, then the last 32 KiB: not the 1.3 MB printed.
    assert!(data.len() < 100_000, "{} bytes", data.len());
    let last = updates.last().unwrap();
    assert_eq!(last["_meta"]["terminal_exit"]["exit_code"], 0, "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_capability_of_the_wrong_type_keeps_text_content() {
    for meta in [
        json!({"terminal_output": "true"}),
        json!({"terminal_output": {"enabled": true}}),
        json!({"terminal_output": 1}),
    ] {
        let mut live = live_with(SCENARIOS);
        let (_, answer) = turn(&mut live, caps(meta.clone()), "read-only", "scenario:escapes go").await;
        assert_eq!(answer.stop_reason, StopReason::EndTurn, "{meta}");
        let (call, updates) = command_updates(&live.updates.json());
        let all = format!("{call}{updates:?}");
        assert!(!all.contains("terminal"), "{meta}: text only: {all}");
        let last = updates.last().unwrap();
        let text = last["content"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("red") && text.contains("plain"), "{meta}: {last}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_command_prints_ends_its_terminal() {
    let mut live = live_with(SCENARIOS);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let app_server = transport() != "exec";
    let stop = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(terminal()))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            set_mode(&cx, &s.session_id, "read-only").await?;
            let request = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:printing go".into()],
            ));
            // On app-server output streams: wait for some; exec shows only the start.
            let printing = || {
                let json = watch.json();
                let started = json.iter().any(|u| u["sessionUpdate"] == "tool_call");
                let printed = json.iter().any(|u| !u["_meta"]["terminal_output"].is_null());
                started && (printed || !app_server)
            };
            assert!(eventually(Duration::from_secs(60), printing).await, "it printed");
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            Ok(request.block_task().await?.stop_reason)
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    let (call, updates) = command_updates(&live.updates.json());
    let id = assert_terminal(&call);
    let last = updates.last().expect("the call ended");
    assert_eq!(last["status"], "failed", "{last}");
    assert_eq!(
        last["_meta"]["terminal_exit"]["terminal_id"],
        id.as_str(),
        "{last}"
    );
    assert_eq!(
        last["content"][0]["type"], "terminal",
        "the terminal stays shown: {last}"
    );
    let exits = updates
        .iter()
        .filter(|u| !u["_meta"]["terminal_exit"].is_null())
        .count();
    assert_eq!(exits, 1, "one exit: {updates:?}");
    if app_server {
        let data = terminal_text(&updates);
        // Codex 0.169 does not stream what a command printed before it reported its start.
        assert!(
            !data.is_empty() && data.lines().all(|l| l.starts_with("line ")),
            "{data:?}"
        );
        assert!(!data.contains("line 300"), "cancelled before the end: {data:?}");
    }
}
