//! Unit tests of the decoder's behaviours that fixtures do not pin down one by one.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::outcome::is_auth_error;
use crate::output::DEFAULT_MAX_OUTPUT_BYTES;

/// File texts for tests: every file had "old <name>" and has "new <name>", except names
/// containing `unknown` (old text unknown) and `absent` (did not exist).
struct FakeFiles;

impl FileTexts for FakeFiles {
    fn before(&mut self, path: &Path) -> OldText {
        let name = path.display().to_string();
        if name.contains("unknown") {
            OldText::Unknown {
                reason: "not captured".into(),
            }
        } else if name.contains("absent") {
            OldText::Absent
        } else {
            OldText::Known(format!("old {name}\n"))
        }
    }

    fn after(&mut self, path: &Path) -> Option<String> {
        Some(format!("new {}\n", path.display()))
    }
}

fn decoder() -> Decoder {
    Decoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        ..DecoderOptions::new("/workspace")
    })
}

/// Decodes `lines`, returning the updates as JSON and the signals.
fn run(decoder: &mut Decoder, lines: &[&str]) -> (Vec<Value>, Vec<Signal>) {
    let mut out = Vec::new();
    let mut signals = Vec::new();
    for line in lines {
        if let Some(signal) = decoder.line(line, &mut FakeFiles, &mut out).unwrap() {
            signals.push(signal);
        }
    }
    (
        out.iter().map(|u| serde_json::to_value(u).unwrap()).collect(),
        signals,
    )
}

fn command_line(event: &str, id: &str, status: &str, output: &str, exit: &Value) -> String {
    json!({"type": event, "item": {"id": id, "type": "command_execution", "command": "/bin/bash -lc 'cargo test'",
        "aggregated_output": output, "exit_code": exit, "status": status}})
    .to_string()
}

#[test]
fn command_output_is_bounded_with_a_marker() {
    let mut d = Decoder::new(DecoderOptions {
        max_output_bytes: 100,
        ..DecoderOptions::new("/workspace")
    });
    let output = "x".repeat(1000);
    let (updates, _) = run(
        &mut d,
        &[&command_line(
            "item.completed",
            "item_0",
            "completed",
            &output,
            &json!(0),
        )],
    );
    let text = updates[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("```\nxxx"), "{text}");
    assert!(text.contains("[… 900 bytes of output omitted …]"), "{text}");
    assert!(text.len() < 200);
}

#[test]
fn a_terminal_client_gets_the_whole_output_once_with_the_exit() {
    let mut d = Decoder::new(DecoderOptions {
        terminal: true,
        ..DecoderOptions::new("/workspace")
    });
    let (updates, _) = run(
        &mut d,
        &[
            &command_line("item.started", "item_0", "in_progress", "", &Value::Null),
            &command_line("item.completed", "item_0", "failed", "no\n", &json!(3)),
            &command_line("item.started", "item_1", "in_progress", "", &Value::Null),
        ],
    );
    assert_eq!(updates.len(), 3, "{updates:?}");
    assert_eq!(
        updates[0]["content"][0],
        json!({"type": "terminal", "terminalId": "item_0"})
    );
    assert_eq!(updates[0]["_meta"]["terminal_info"]["cwd"], "/workspace");
    assert_eq!(updates[1]["status"], "failed");
    assert_eq!(
        updates[1]["content"],
        json!([{"type": "terminal", "terminalId": "item_0"}])
    );
    assert_eq!(updates[1]["_meta"]["terminal_output"]["data"], "no\n");
    assert_eq!(updates[1]["_meta"]["terminal_exit"]["exit_code"], 3);
    // A cancel ends the open terminal.
    let mut out = Vec::new();
    d.close_open_tool_calls_because(ToolCallStatus::Failed, Some("Cancelled."), &mut out);
    let end = serde_json::to_value(&out[0]).unwrap();
    assert_eq!(end["content"][0]["terminalId"], "item_1");
    assert_eq!(end["content"][1]["content"]["text"], "Cancelled.");
    assert_eq!(end["_meta"]["terminal_exit"]["exit_code"], Value::Null);
}

#[test]
fn huge_single_output_is_bounded() {
    let mut d = decoder();
    let output = "0123456789abcdef\n".repeat(4 * 1024 * 1024); // 68 MiB
    let line = command_line("item.completed", "item_0", "completed", &output, &json!(0));
    let (updates, _) = run(&mut d, &[&line]);
    let text = updates[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(text.len() <= DEFAULT_MAX_OUTPUT_BYTES + 100, "{}", text.len());
    assert!(text.contains(" bytes of output omitted …]"), "no marker");
    // Cut on line boundaries: every kept line is whole.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("```") && !l.starts_with("[…"))
        .collect();
    assert!(
        kept.iter().all(|l| *l == "0123456789abcdef"),
        "a partial line was kept"
    );
    let omitted: usize = text
        .split("[… ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(omitted + kept.len() * 17, output.len());
}

#[test]
fn completed_without_started_is_a_whole_tool_call() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[&command_line(
            "item.completed",
            "item_3",
            "failed",
            "boom\n",
            &json!(2),
        )],
    );
    assert_eq!(
        updates,
        [
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1/item_3", "title": "cargo test", "name": "exec_command",
            "kind": "execute", "status": "failed", "content": [{"type": "content", "content": {"type": "text", "text": "```\nboom\n```"}}],
            "rawInput": {"command": "/bin/bash -lc 'cargo test'"}, "rawOutput": {"exit_code": 2, "status": "failed"}})
        ]
    );
}

#[test]
fn declined_command_fails_with_a_note() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            &command_line("item.started", "item_0", "in_progress", "", &Value::Null),
            &command_line("item.completed", "item_0", "declined", "", &Value::Null),
        ],
    );
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[1]["sessionUpdate"], "tool_call_update");
    assert_eq!(updates[1]["status"], "failed");
    assert_eq!(
        updates[1]["content"][0]["content"]["text"],
        "Command declined: it was not run."
    );
}

#[test]
fn web_search_with_duplicate_id_keeps_one_tool_call_id() {
    let mut d = decoder();
    let started = r#"{"type":"item.started","item":{"id":"item_0","type":"web_search","id":"ws_0180","query":"","action":{"type":"other"}}}"#;
    let completed = r#"{"type":"item.completed","item":{"id":"item_0","type":"web_search","id":"ws_0180","query":"acp rust","action":{"type":"search","query":"acp rust"}}}"#;
    let (updates, _) = run(&mut d, &[started, completed]);
    assert_eq!(updates[0]["toolCallId"], "t1/item_0");
    assert_eq!(updates[0]["kind"], "fetch");
    assert_eq!(updates[0]["title"], "Search the web");
    assert_eq!(updates[1]["toolCallId"], "t1/item_0");
    assert_eq!(updates[1]["title"], "Search the web: acp rust");
    assert_eq!(updates[1]["rawOutput"]["provider_id"], "ws_0180");
}

#[test]
fn error_repeated_by_turn_failed_is_shown_once() {
    let mut d = decoder();
    let (updates, signals) = run(
        &mut d,
        &[
            r#"{"type":"error","message":"Reconnecting... 1/2 (busy)"}"#,
            r#"{"type":"error","message":"unexpected status 401 Unauthorized: bad key"}"#,
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: bad key"}}"#,
        ],
    );
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(
        updates[0]["content"]["text"],
        "Codex warning: Reconnecting... 1/2 (busy)"
    );
    assert_eq!(
        signals,
        [Signal::TurnFailed {
            message: "unexpected status 401 Unauthorized: bad key".into(),
            auth_required: true
        }]
    );
}

#[test]
fn transient_errors_become_notices_and_repeats_are_dropped() {
    let mut d = Decoder::new(DecoderOptions {
        notices: true,
        ..DecoderOptions::new("/workspace")
    });
    let retry = r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed)"}"#;
    let (updates, _) = run(&mut d, &[retry, retry, retry]);
    let mut out = Vec::new();
    d.finish(&mut out);
    assert!(out.is_empty(), "the repeats stay hidden even at the end");
    assert_eq!(
        updates,
        [json!({"sessionUpdate": "notice", "severity": "warning",
            "title": "Codex warning: Reconnecting... waiting for network (Connection failed)"})]
    );
}

#[test]
fn pending_error_is_shown_at_finish() {
    let mut d = decoder();
    let (updates, _) = run(&mut d, &[r#"{"type":"error","message":"lost"}"#]);
    assert!(updates.is_empty());
    let mut out = Vec::new();
    d.finish(&mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn different_turn_failed_message_keeps_the_error() {
    let mut d = decoder();
    let (updates, signals) = run(
        &mut d,
        &[
            r#"{"type":"error","message":"a"}"#,
            r#"{"type":"turn.failed","error":{"message":"b"}}"#,
        ],
    );
    assert_eq!(updates.len(), 1);
    assert_eq!(
        signals,
        [Signal::TurnFailed {
            message: "b".into(),
            auth_required: false
        }]
    );
}

#[test]
fn unknown_types_are_counted() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            r#"{"type":"item.plan.delta","item_id":"item_1","delta":"x"}"#,
            r#"{"type":"item.plan.delta","item_id":"item_1","delta":"y"}"#,
            r#"{"type":"item.started","item":{"id":"item_2","type":"hologram","tool":"wait"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"hologram","tool":"wait"}}"#,
            r#"{"type":"request_user_input","id":"t","call_id":"c","questions":[]}"#,
        ],
    );
    assert!(updates.is_empty());
    let counts: Vec<(&str, u64)> = d.unknown_counts().iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        counts,
        [
            ("event:item.plan.delta", 2),
            ("event:request_user_input", 1),
            ("item:hologram", 2)
        ]
    );
}

#[test]
fn collab_calls_are_tool_calls_with_one_notice_that_exec_does_not_show_subagents() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            r#"{"type":"item.started","item":{"id":"item_1","type":"collab_tool_call","tool":"spawn_agent","prompt":"Count files","receiver_thread_ids":"odd","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"collab_tool_call","tool":"spawn_agent","prompt":"Count files","receiver_thread_ids":["th-2",3],"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"collab_tool_call","tool":"wait","status":"failed"}}"#,
        ],
    );
    let json: Vec<serde_json::Value> = updates.iter().map(|u| serde_json::to_value(u).unwrap()).collect();
    let notices = json
        .iter()
        .filter(|u| u.to_string().contains("On the exec transport acplb sees only"))
        .count();
    assert_eq!(notices, 1, "{json:?}");
    let calls: Vec<&serde_json::Value> = json
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    assert_eq!(calls[0]["title"], "Subagent: Count files");
    assert_eq!(calls[0]["kind"], "think");
    assert_eq!(calls[1]["title"], "Waiting for subagents");
    assert_eq!(calls[1]["status"], "failed");
    let finished = json
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap();
    assert_eq!(finished["status"], "completed");
    assert_eq!(
        finished["rawOutput"]["receiverThreadIds"],
        serde_json::json!(["th-2"])
    );
    assert!(d.unknown_counts().is_empty());
}

#[test]
fn malformed_lines_are_errors_with_their_number() {
    let mut d = decoder();
    let mut out = Vec::new();
    assert_eq!(d.line("", &mut FakeFiles, &mut out), Ok(None));
    assert_eq!(d.line("  \r", &mut FakeFiles, &mut out), Ok(None));
    let Err(DecodeError::Json { line_no, message }) = d.line("{\"type\":", &mut FakeFiles, &mut out) else {
        panic!("expected an error")
    };
    assert_eq!(line_no, 3);
    assert!(message.contains("EOF"), "{message}");
    assert!(d.line("not json", &mut FakeFiles, &mut out).is_err());
    assert!(d.line(r#"{"no_type":1}"#, &mut FakeFiles, &mut out).is_err());
    assert_eq!(
        d.line(r#"{"type":"turn.started"}"#, &mut FakeFiles, &mut out),
        Ok(None)
    );
    assert!(out.is_empty());
}

#[test]
fn file_changes_show_diffs_or_say_why_not() {
    let mut d = decoder();
    let item = |status: &str| {
        json!({"id": "item_1", "type": "file_change", "status": status, "changes": [
            {"path": "/workspace/a.rs", "kind": "update"},
            {"path": "/workspace/new.txt", "kind": "add"},
            {"path": "/workspace/gone.txt", "kind": "delete"},
            {"path": "/workspace/unknown.rs", "kind": "update"},
            {"path": "/elsewhere/absent.rs", "kind": "update"},
        ]})
    };
    let started = json!({"type": "item.started", "item": item("in_progress")}).to_string();
    let completed = json!({"type": "item.completed", "item": item("completed")}).to_string();
    let (updates, _) = run(&mut d, &[&started, &completed]);
    assert_eq!(updates[0]["title"], "Edit a.rs, new.txt, gone.txt, and 2 more");
    assert_eq!(updates[0]["kind"], "edit");
    assert_eq!(updates[0]["locations"].as_array().unwrap().len(), 5);
    assert_eq!(
        updates[1]["content"],
        json!([
            {"type": "diff", "path": "/workspace/a.rs", "oldText": "old /workspace/a.rs\n", "newText": "new /workspace/a.rs\n"},
            {"type": "diff", "path": "/workspace/new.txt", "newText": "new /workspace/new.txt\n"},
            {"type": "diff", "path": "/workspace/gone.txt", "oldText": "old /workspace/gone.txt\n", "newText": ""},
            {"type": "content", "content": {"type": "text",
                "text": "Changed unknown.rs; its previous content is unknown (not captured), so no diff is shown."}},
            {"type": "diff", "path": "/elsewhere/absent.rs", "newText": "new /elsewhere/absent.rs\n"},
        ])
    );
    assert_eq!(updates[1]["status"], "completed");
}

#[test]
fn failed_file_change_has_no_diff() {
    let mut d = decoder();
    let line =
        json!({"type": "item.completed", "item": {"id": "item_1", "type": "file_change", "status": "failed",
        "changes": [{"path": "/workspace/a.rs", "kind": "update"}]}})
        .to_string();
    let (updates, _) = run(&mut d, &[&line]);
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[0]["status"], "failed");
    assert_eq!(
        updates[0]["content"][0]["content"]["text"],
        "The patch failed; no file was changed by it."
    );
}

#[test]
fn mcp_results_map_to_content() {
    let mut d = decoder();
    let line =
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "mcp_tool_call", "server": "s",
        "tool": "t", "arguments": {"a": 1}, "status": "failed", "error": null, "result": {"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
        ], "structured_content": null}}})
        .to_string();
    let (updates, _) = run(&mut d, &[&line]);
    assert_eq!(updates[0]["title"], "s.t");
    assert_eq!(updates[0]["status"], "failed");
    assert_eq!(updates[0]["rawInput"], json!({"a": 1}));
    let content = &updates[0]["content"];
    assert_eq!(content[0]["content"], json!({"type": "text", "text": "hello"}));
    assert_eq!(
        content[1]["content"],
        json!({"type": "image", "data": "iVBOR", "mimeType": "image/png"})
    );
    assert_eq!(
        content[2]["content"]["text"],
        "```\n{\"type\":\"resource_link\",\"uri\":\"file:///x\",\"name\":\"x\"}\n```"
    );
}

#[test]
fn todo_list_becomes_a_plan() {
    let mut d = decoder();
    let line = r#"{"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false},{"text":"c","completed":false}]}}"#;
    let (updates, _) = run(&mut d, &[line]);
    let statuses: Vec<&str> = updates[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["completed", "in_progress", "pending"]);
    assert_eq!(updates[0]["entries"][0]["priority"], "medium");
}

#[test]
fn open_tool_calls_are_closed_on_cancel() {
    let mut d = decoder();
    let (_, _) = run(
        &mut d,
        &[
            &command_line("item.started", "item_0", "in_progress", "", &Value::Null),
            &command_line("item.started", "item_1", "in_progress", "", &Value::Null),
            &command_line("item.completed", "item_1", "completed", "", &json!(0)),
        ],
    );
    let mut out = Vec::new();
    d.close_open_tool_calls(ToolCallStatus::Failed, &mut out);
    let out: Vec<Value> = out.iter().map(|u| serde_json::to_value(u).unwrap()).collect();
    assert_eq!(
        out,
        [json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1/item_0", "status": "failed"})]
    );
    let mut again = Vec::new();
    d.close_open_tool_calls(ToolCallStatus::Failed, &mut again);
    assert!(again.is_empty());
}

#[test]
fn consecutive_messages_are_kept_apart() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"First."}}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Second."}}"#,
        ],
    );
    assert_eq!(updates[0]["content"]["text"], "First.");
    assert_eq!(updates[0]["messageId"], "t1/item_0");
    assert_eq!(updates[1]["content"]["text"], "\n\nSecond.");
    assert_eq!(updates[1]["messageId"], "t1/item_1");
}

#[test]
fn refused_patch_on_stderr_is_a_failed_edit() {
    let mut d = decoder();
    let mut out = Vec::new();
    d.stderr_line("Reading additional input from stdin...", &mut out);
    d.stderr_line(
        "2026-11-22T02:54:28.187449Z ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings",
        &mut out,
    );
    let out: Vec<Value> = out.iter().map(|u| serde_json::to_value(u).unwrap()).collect();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["toolCallId"], "t1/patch_refused_1");
    assert_eq!(out[0]["kind"], "edit");
    assert_eq!(out[0]["status"], "failed");
    assert_eq!(out[0]["title"], "Edit rejected");
}

#[test]
fn usage_is_reported_as_cumulative_totals() {
    let mut d = decoder();
    let (_, signals) = run(
        &mut d,
        &[
            r#"{"type":"thread.started","thread_id":"th"}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":3600,"cached_input_tokens":600,"cache_write_input_tokens":0,"output_tokens":144,"reasoning_output_tokens":48}}"#,
        ],
    );
    let Signal::TurnCompleted(usage) = &signals[1] else {
        panic!("{signals:?}")
    };
    assert_eq!(signals[0], Signal::ThreadStarted("th".into()));
    assert_eq!(usage.input_tokens, 3600);
    assert_eq!(
        turn_delta(
            &Totals {
                input_tokens: 2400,
                ..Totals::default()
            },
            usage
        )
        .input_tokens,
        1200
    );
}

#[test]
fn auth_errors_are_recognised() {
    assert!(is_auth_error(
        "unexpected status 401 Unauthorized: Incorrect API key provided"
    ));
    assert!(is_auth_error("HTTP 401"));
    assert!(!is_auth_error(
        "exceeded retry limit, last status: 429 Too Many Requests"
    ));
    assert!(!is_auth_error("used 4010 tokens"));
}
