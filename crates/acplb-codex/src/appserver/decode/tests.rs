//! Unit tests of the app-server decoder's behaviours that the recorded fixtures do not pin
//! down one by one: streaming edge cases, bounds, odd and malformed input.

use serde_json::{Value, json};

use super::*;

fn decoder() -> AppDecoder {
    AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        ..DecoderOptions::new("/workspace")
    })
}

/// Feeds `(method, params)` pairs; returns the updates as JSON and the signals.
fn run(decoder: &mut AppDecoder, messages: &[(&str, Value)]) -> (Vec<Value>, Vec<AppSignal>) {
    let mut out = Vec::new();
    let mut signals = Vec::new();
    for (method, params) in messages {
        signals.extend(decoder.notification(method, params, &mut out));
    }
    (
        out.iter().map(|u| serde_json::to_value(u).unwrap()).collect(),
        signals,
    )
}

fn delta(item: &str, text: &str) -> (&'static str, Value) {
    (
        "item/agentMessage/delta",
        json!({"threadId": "th", "turnId": "tu", "itemId": item, "delta": text}),
    )
}

#[expect(clippy::needless_pass_by_value, reason = "callers pass `json!` literals")]
fn item(event: &'static str, item: Value) -> (&'static str, Value) {
    (event, json!({"threadId": "th", "turnId": "tu", "item": item}))
}

fn message(id: &str, text: &str) -> Value {
    json!({"type": "agentMessage", "id": id, "text": text, "phase": "final_answer"})
}

#[expect(clippy::needless_pass_by_value, reason = "callers pass `json!` literals")]
fn command(id: &str, status: &str, output: Value) -> Value {
    json!({"type": "commandExecution", "id": id, "command": "/bin/bash -lc 'cargo test'", "cwd": "/workspace",
        "status": status, "commandActions": [{"type": "unknown", "command": "cargo test"}],
        "aggregatedOutput": output, "exitCode": null})
}

fn texts(updates: &[Value]) -> Vec<&str> {
    updates
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[test]
fn deltas_are_not_sent_again_at_completion() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            item("item/started", message("msg_1", "")),
            delta("msg_1", "Hello, "),
            delta("msg_1", "world."),
            item("item/completed", message("msg_1", "Hello, world.")),
        ],
    );
    assert_eq!(texts(&updates), ["Hello, ", "world."]);
    assert!(updates.iter().all(|u| u["messageId"] == "t1/msg_1"));
}

#[test]
fn a_completed_text_longer_than_its_deltas_adds_the_rest() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            delta("msg_1", "Hello, "),
            item("item/completed", message("msg_1", "Hello, world.")),
            // A message that streamed nothing is sent whole at completion.
            item("item/completed", message("msg_2", "Bye.")),
        ],
    );
    assert_eq!(texts(&updates), ["Hello, ", "world.", "\n\nBye."]);
}

#[test]
fn command_output_streams_bounded_and_the_last_version_stands() {
    let mut d = AppDecoder::new(DecoderOptions {
        max_output_bytes: 100,
        ..DecoderOptions::new("/workspace")
    });
    let mut messages = vec![item("item/started", command("c1", "inProgress", Value::Null))];
    for n in 0..50 {
        messages.push((
            "item/commandExecution/outputDelta",
            json!({"itemId": "c1", "delta": format!("line {n:02}\n")}),
        ));
    }
    // Codex sent no aggregated output (as for an interrupted command): the streamed one stays.
    messages.push(item("item/completed", command("c1", "failed", Value::Null)));
    let (updates, _) = run(&mut d, &messages);
    // The first piece at once, then coalesced (ADR 0033): not one update per piece.
    assert!(updates.len() < 20, "{}", updates.len());
    let first = updates[1]["content"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(first, "```\nline 00\n```");
    let end = updates.len() - 1;
    let last = updates[end]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(last.starts_with("```\nline 00\n"), "{last}");
    assert!(last.contains(" bytes of output omitted …]"), "{last}");
    assert!(last.ends_with("line 49\n```"), "{last}");
    assert!(last.len() < 200, "{}", last.len());
    assert_eq!(updates[end]["status"], "failed");
}

#[test]
fn a_terminal_gets_only_new_bytes_and_the_exit() {
    let mut d = AppDecoder::new(DecoderOptions {
        terminal: true,
        ..DecoderOptions::new("/workspace")
    });
    let mut done = command("c1", "completed", json!("one\ntwo\n"));
    done["exitCode"] = json!(2);
    let messages = [
        item("item/started", command("c1", "inProgress", Value::Null)),
        delta_for("c1", "one\n"),
        delta_for("c1", "two\n"),
        item("item/completed", done),
    ];
    let (updates, _) = run(&mut d, &messages);
    assert_eq!(updates.len(), 4, "{updates:?}");
    assert_eq!(
        updates[0]["content"][0],
        json!({"type": "terminal", "terminalId": "c1"})
    );
    assert_eq!(updates[0]["_meta"]["terminal_info"]["terminal_id"], "c1");
    assert_eq!(updates[1]["_meta"]["terminal_output"]["data"], "one\n");
    assert_eq!(updates[2]["_meta"]["terminal_output"]["data"], "two\n");
    assert!(updates[2].get("content").is_none(), "{}", updates[2]);
    assert_eq!(updates[3]["content"][0]["type"], "terminal");
    assert!(
        updates[3]["_meta"].get("terminal_output").is_none(),
        "{}",
        updates[3]
    );
    assert_eq!(
        updates[3]["_meta"]["terminal_exit"],
        json!({"terminal_id": "c1", "exit_code": 2, "signal": null})
    );
    // A command Codex did not stream: its aggregated output goes to the terminal at the end.
    let (updates, _) = run(
        &mut d,
        &[
            item("item/started", command("c2", "inProgress", Value::Null)),
            item(
                "item/completed",
                command("c2", "completed", json!("all at once\n")),
            ),
        ],
    );
    assert_eq!(updates[1]["_meta"]["terminal_output"]["data"], "all at once\n");
    // A cancel ends an open terminal with an exit without a code.
    let (_, _) = run(
        &mut d,
        &[
            item("item/started", command("c3", "inProgress", Value::Null)),
            delta_for("c3", "half"),
        ],
    );
    let mut out = Vec::new();
    d.close_open_tool_calls_because(ToolCallStatus::Failed, Some("Cancelled."), &mut out);
    let end = serde_json::to_value(&out[0]).unwrap();
    assert_eq!(end["status"], "failed");
    assert_eq!(end["content"][0]["type"], "terminal");
    assert_eq!(end["content"].as_array().unwrap().len(), 2, "{end}");
    assert_eq!(end["_meta"]["terminal_exit"]["exit_code"], Value::Null);
}

fn delta_for(id: &str, text: &str) -> (&'static str, Value) {
    (
        "item/commandExecution/outputDelta",
        json!({"itemId": id, "delta": text}),
    )
}

#[test]
fn unknown_methods_and_item_types_are_counted() {
    let mut d = decoder();
    let (updates, signals) = run(
        &mut d,
        &[
            ("thread/hologram/changed", json!({})),
            ("thread/hologram/changed", json!({})),
            ("thread/status/changed", json!({"status": {"type": "idle"}})),
            item("item/started", json!({"type": "hologram", "id": "h1"})),
            item("item/completed", json!({"type": "hologram", "id": "h1"})),
        ],
    );
    assert!(updates.is_empty() && signals.is_empty());
    assert_eq!(
        d.unknown_counts(),
        BTreeMap::from([
            ("item:hologram".to_owned(), 2),
            ("method:thread/hologram/changed".to_owned(), 2)
        ])
    );
}

#[test]
fn malformed_params_are_counted_not_fatal() {
    let mut d = decoder();
    let (updates, signals) = run(
        &mut d,
        &[
            ("item/agentMessage/delta", json!({"itemId": "m", "delta": 5})),
            ("item/agentMessage/delta", json!(null)),
            ("item/started", json!({"item": "not an object"})),
            ("item/completed", json!({})),
            item(
                "item/started",
                json!({"type": "commandExecution", "id": "c", "command": ["ls"]}),
            ),
            ("turn/completed", json!({"turn": {"status": "completed"}})),
            (
                "thread/tokenUsage/updated",
                json!({"tokenUsage": {"total": "lots"}}),
            ),
            ("turn/plan/updated", json!({"plan": [{"step": 1}]})),
            (
                "item/commandExecution/outputDelta",
                json!({"itemId": "nowhere", "delta": "x"}),
            ),
        ],
    );
    assert!(updates.is_empty(), "{updates:?}");
    assert!(signals.is_empty());
    let counts = d.unknown_counts();
    assert_eq!(counts["malformed:item/agentMessage/delta"], 2);
    assert_eq!(counts["malformed:item/started"], 2);
    assert_eq!(counts["malformed:item/completed"], 1);
    assert_eq!(counts["malformed:turn/completed"], 1);
    assert_eq!(counts["malformed:thread/tokenUsage/updated"], 1);
    assert_eq!(counts["malformed:turn/plan/updated"], 1);
    // Nulls where strings belong read as empty: the decoder keeps going.
    let (updates, _) = run(
        &mut d,
        &[item(
            "item/completed",
            json!({"type": "agentMessage", "id": "m2", "text": null}),
        )],
    );
    assert!(updates.is_empty());
}

#[test]
fn retries_are_warnings_and_a_failure_is_shown_once() {
    let mut d = decoder();
    let error = |message: &str, retry: bool| {
        (
            "error",
            json!({"error": {"message": message, "codexErrorInfo": "serverOverloaded"}, "willRetry": retry}),
        )
    };
    let failed = |message: &str, info: Value| {
        (
            "turn/completed",
            json!({"turn": {"id": "u1", "status": "failed", "error": {"message": message, "codexErrorInfo": info}}}),
        )
    };
    let (updates, signals) = run(
        &mut d,
        &[
            error("Reconnecting… 1/5", true),
            error("Reconnecting… 1/5", true),
            error("overloaded", false),
            failed("overloaded", json!("unauthorized")),
        ],
    );
    assert_eq!(texts(&updates), ["Codex warning: Reconnecting… 1/5"]);
    assert_eq!(updates[0]["sessionUpdate"], "agent_thought_chunk");
    assert_eq!(
        signals,
        [AppSignal::TurnCompleted {
            turn_id: "u1".into(),
            end: TurnEnd::Failed {
                message: "overloaded".into(),
                auth_required: true
            }
        }]
    );
    // With notices, and a turn that fails with another message: the held error shows.
    let mut d = AppDecoder::new(DecoderOptions {
        notices: true,
        ..DecoderOptions::new("/w")
    });
    let (updates, signals) = run(&mut d, &[error("first", false), failed("second", Value::Null)]);
    assert_eq!(
        updates,
        [json!({"sessionUpdate": "notice", "severity": "warning", "title": "Codex warning: first"})]
    );
    assert!(matches!(
        &signals[0],
        AppSignal::TurnCompleted {
            end: TurnEnd::Failed {
                auth_required: false,
                ..
            },
            ..
        }
    ));
}

#[test]
fn turn_end_closes_open_calls_and_names_come_through() {
    let mut d = decoder();
    let (updates, signals) = run(
        &mut d,
        &[
            (
                "turn/started",
                json!({"threadId": "th", "turn": {"id": "u1", "status": "inProgress"}}),
            ),
            item("item/started", command("c1", "inProgress", Value::Null)),
            (
                "thread/name/updated",
                json!({"threadId": "th", "threadName": "Fix the tests"}),
            ),
            ("thread/name/updated", json!({"threadId": "th"})),
            (
                "turn/completed",
                json!({"turn": {"id": "u1", "status": "interrupted", "error": null}}),
            ),
            (
                "turn/completed",
                json!({"turn": {"id": "u2", "status": "paused"}}),
            ),
        ],
    );
    assert_eq!(updates[1]["status"], "failed");
    assert_eq!(
        updates[1]["content"][0]["content"]["text"],
        "Cancelled before it finished."
    );
    assert_eq!(
        signals[..3],
        [
            AppSignal::TurnStarted { turn_id: "u1".into() },
            AppSignal::ThreadName("Fix the tests".into()),
            AppSignal::TurnCompleted {
                turn_id: "u1".into(),
                end: TurnEnd::Interrupted
            },
        ]
    );
    assert!(matches!(
        &signals[3],
        AppSignal::TurnCompleted { end: TurnEnd::Failed { message, .. }, .. } if message.contains("`paused`")
    ));
}

#[test]
fn closing_keeps_what_a_call_showed_and_adds_the_reason() {
    let mut d = decoder();
    let (_, _) = run(
        &mut d,
        &[
            item("item/started", command("c1", "inProgress", Value::Null)),
            (
                "item/commandExecution/outputDelta",
                json!({"itemId": "c1", "delta": "compiling\n"}),
            ),
        ],
    );
    let mut out = Vec::new();
    d.close_open_tool_calls_because(ToolCallStatus::Failed, Some("Codex exited."), &mut out);
    d.close_open_tool_calls_because(ToolCallStatus::Failed, Some("again"), &mut out);
    let update = serde_json::to_value(&out[0]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(update["content"][0]["content"]["text"], "```\ncompiling\n```");
    assert_eq!(update["content"][1]["content"]["text"], "Codex exited.");
}

#[test]
fn moved_files_collab_and_client_tools() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            item(
                "item/completed",
                json!({"type": "fileChange", "id": "f1", "status": "completed", "changes": [
                    {"path": "/workspace/a.rs", "kind": {"type": "update", "move_path": "/workspace/b.rs"},
                     "diff": "@@ -1 +1 @@\n-x\n+y\n"}]}),
            ),
            item(
                "item/started",
                json!({"type": "collabAgentToolCall", "id": "k1", "tool": "spawnAgent", "status": "inProgress",
                    "senderThreadId": "s", "receiverThreadIds": [], "prompt": "Check the docs", "model": "gpt-5.5",
                    "reasoningEffort": null, "agentsStates": {}}),
            ),
            item(
                "item/completed",
                json!({"type": "collabAgentToolCall", "id": "k1", "tool": "spawnAgent", "status": "completed",
                    "receiverThreadIds": ["0000-1111-deadbeef"], "prompt": "Check the docs", "model": "gpt-5.5",
                    "agentsStates": {"0000-1111-deadbeef": {"status": "running", "message": null}}}),
            ),
            item(
                "item/completed",
                json!({"type": "dynamicToolCall", "id": "d1", "namespace": "editor", "tool": "open", "arguments": {},
                    "status": "completed", "success": true, "durationMs": 3,
                    "contentItems": [{"type": "inputText", "text": "opened"}]}),
            ),
        ],
    );
    assert_eq!(updates[0]["title"], "Edit a.rs");
    assert_eq!(updates[0]["content"][0]["content"]["text"], "Moved a.rs to b.rs.");
    assert_eq!(
        updates[0]["content"][1],
        json!({"type": "diff", "path": "/workspace/b.rs", "oldText": "x\n", "newText": "y\n"})
    );
    assert_eq!(updates[1]["title"], "Spawn agent (gpt-5.5)");
    assert_eq!(updates[1]["content"][0]["content"]["text"], "Check the docs");
    assert_eq!(updates[2]["title"], "Spawn agent deadbeef");
    assert_eq!(
        updates[2]["content"][0]["content"]["text"],
        "Agent deadbeef: running"
    );
    assert_eq!(updates[3]["title"], "editor.open");
    assert_eq!(updates[3]["status"], "completed");
    assert_eq!(updates[3]["content"][0]["content"]["text"], "opened");
}

#[test]
fn usage_needs_a_context_window_and_plans_are_not_repeated() {
    let mut d = decoder();
    let usage = |window: Value| {
        (
            "thread/tokenUsage/updated",
            json!({"tokenUsage": {"total": {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10},
                "last": {"totalTokens": 12}, "modelContextWindow": window}}),
        )
    };
    let plan = (
        "turn/plan/updated",
        json!({"plan": [{"step": "a", "status": "inProgress"}]}),
    );
    let (updates, signals) = run(
        &mut d,
        &[usage(json!(1000)), usage(Value::Null), plan.clone(), plan],
    );
    assert_eq!(
        updates[0],
        json!({"sessionUpdate": "usage_update", "used": 12, "size": 1000})
    );
    assert_eq!(updates[1]["sessionUpdate"], "plan");
    assert_eq!(updates.len(), 2);
    assert_eq!(signals.len(), 2);
    assert!(matches!(&signals[1], AppSignal::Totals(t) if t.input_tokens == 20 && t.output_tokens == 10));
}

fn compacting() -> AppDecoder {
    AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        compaction: true,
        ..DecoderOptions::new("/workspace")
    })
}

#[test]
fn a_compaction_is_one_update_per_state_for_a_client_that_takes_them() {
    let compaction = json!({"type": "contextCompaction", "id": "c1"});
    let (updates, _) = run(
        &mut compacting(),
        &[
            item("item/started", compaction.clone()),
            item("item/started", compaction.clone()),
            item("item/completed", compaction),
            (
                "turn/completed",
                json!({"turn": {"id": "tu", "status": "completed"}}),
            ),
        ],
    );
    assert_eq!(
        updates,
        [
            json!({"sessionUpdate": "compaction_update", "compactionId": "t1/c1", "status": "in_progress"}),
            json!({"sessionUpdate": "compaction_update", "compactionId": "t1/c1", "status": "completed"}),
        ]
    );
}

#[test]
fn a_compaction_the_turn_leaves_running_ends_with_the_turn() {
    let started = item("item/started", json!({"type": "contextCompaction", "id": "c1"}));
    let (updates, _) = run(
        &mut compacting(),
        &[
            started.clone(),
            (
                "turn/completed",
                json!({"turn": {"id": "tu", "status": "interrupted"}}),
            ),
        ],
    );
    assert_eq!(updates[1]["status"], "cancelled", "{updates:?}");
    let mut d = compacting();
    let (_, _) = run(&mut d, &[started]);
    let mut out = Vec::new();
    d.close_open_tool_calls_because(ToolCallStatus::Failed, Some("Codex exited."), &mut out);
    let closed = serde_json::to_value(&out[0]).unwrap();
    assert_eq!(closed["status"], "cancelled");
    assert_eq!(closed["error"], "Codex exited.");
    // Nothing is left to close twice.
    let mut again = Vec::new();
    d.close_open_tool_calls_because(ToolCallStatus::Failed, None, &mut again);
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn without_the_capability_a_compaction_is_a_thought_and_never_an_update() {
    let compaction = json!({"type": "contextCompaction", "id": "c1"});
    let (updates, _) = run(
        &mut decoder(),
        &[
            item("item/started", compaction.clone()),
            item("item/completed", compaction),
        ],
    );
    assert!(
        updates.iter().all(|u| u["sessionUpdate"] != "compaction_update"),
        "{updates:?}"
    );
    assert!(
        updates
            .iter()
            .any(|u| u.to_string().contains("compacted the conversation")),
        "{updates:?}"
    );
}

/// A command with Codex's process id (a unified exec command that may outlive its turn).
fn background_command(status: &str) -> Value {
    let mut c = command("call_9", status, Value::Null);
    c["processId"] = json!("4242");
    c
}

#[test]
fn a_command_that_runs_on_after_its_turn_stays_open_and_ends_later() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            item("item/started", background_command("inProgress")),
            item("item/started", command("call_1", "inProgress", Value::Null)),
            (
                "turn/completed",
                json!({"turn": {"id": "tu", "status": "completed"}}),
            ),
        ],
    );
    let last = updates.last().unwrap();
    assert_eq!(last["toolCallId"], "t1/call_9", "{updates:?}");
    assert!(last.get("status").is_none_or(Value::is_null), "{last}");
    assert!(
        last["content"]
            .to_string()
            .contains("Runs in the background as process 4242"),
        "{last}"
    );
    // The command without a process id closed as before.
    assert!(
        updates
            .iter()
            .any(|u| u["toolCallId"] == "t1/call_1" && u["status"] == "failed")
    );
    assert!(d.following());
    let delta = (
        "item/commandExecution/outputDelta",
        json!({"threadId": "th", "turnId": "tu", "itemId": "call_9", "delta": "late\n"}),
    );
    assert!(d.follows(delta.0, &delta.1));
    assert!(!d.follows("item/agentMessage/delta", &delta.1));
    let mut done = background_command("completed");
    done["aggregatedOutput"] = json!("late\n");
    done["exitCode"] = json!(0);
    let (later, _) = run(&mut d, &[delta, item("item/completed", done)]);
    assert_eq!(later.last().unwrap()["status"], "completed", "{later:?}");
    assert!(!d.following());
}

#[test]
fn an_interrupted_turn_closes_its_background_commands() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            item("item/started", background_command("inProgress")),
            (
                "turn/completed",
                json!({"turn": {"id": "tu", "status": "interrupted"}}),
            ),
        ],
    );
    assert_eq!(updates.last().unwrap()["status"], "failed", "{updates:?}");
    assert!(!d.following());
}

#[test]
fn an_air_client_gets_patches_and_no_repeated_task_only_for_what_it_declared() {
    let messages = [
        item(
            "item/completed",
            json!({"type": "fileChange", "id": "f1", "status": "completed", "changes": [
                {"path": "/workspace/a.rs", "kind": {"type": "update", "move_path": null},
                 "diff": "@@ -1 +1 @@\n-x\n+y\n"}]}),
        ),
        item(
            "item/started",
            json!({"type": "collabAgentToolCall", "id": "k1", "tool": "spawnAgent", "status": "inProgress",
                "senderThreadId": "s", "receiverThreadIds": [], "prompt": "Check the docs", "model": null,
                "reasoningEffort": null, "agentsStates": {}}),
        ),
    ];
    let air = |declared: &[&str]| {
        let air = acplb_core::capabilities::Air {
            capabilities: declared.iter().map(|c| (*c).to_owned()).collect(),
        };
        let mut d = AppDecoder::new(DecoderOptions {
            id_prefix: "t1/".into(),
            air: Some(air),
            ..DecoderOptions::new("/workspace")
        });
        run(&mut d, &messages).0
    };
    let both = air(&["diffPatch", "rawInputRendering"]);
    let patch = &both[0]["content"][0]["_meta"]["jetbrains"]["air"]["diffPatch"];
    assert_eq!(
        patch["text"],
        "diff --git a/workspace/a.rs b/workspace/a.rs\n--- a/workspace/a.rs\n+++ b/workspace/a.rs\n@@ -1 +1 @@\n-x\n+y\n"
    );
    assert!(
        both[1].get("content").is_none_or(|c| c == &json!([])),
        "{}",
        both[1]
    );
    assert_eq!(both[1]["rawInput"]["prompt"], "Check the docs");
    let neither = air(&[]);
    assert_eq!(
        neither[0]["content"][0],
        json!({"type": "diff", "path": "/workspace/a.rs", "oldText": "x\n", "newText": "y\n"})
    );
    assert_eq!(neither[1]["content"][0]["content"]["text"], "Check the docs");
}

/// A decoder for an AIR client that declared `asyncTasks`, after a turn that left
/// `background_command` running; the turn's updates.
fn air_task_turn() -> (AppDecoder, Vec<Value>) {
    let air = acplb_core::capabilities::Air {
        capabilities: vec!["asyncTasks".to_owned()],
    };
    let mut d = AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        air: Some(air),
        ..DecoderOptions::new("/workspace")
    });
    let turn = [
        item("item/started", background_command("inProgress")),
        (
            "turn/completed",
            json!({"turn": {"id": "tu", "status": "completed"}}),
        ),
    ];
    let (updates, _) = run(&mut d, &turn);
    (d, updates)
}

/// The updates that follow `update` (ADR 0051).
fn followers(update: &Value) -> Value {
    update["_meta"][acplb_core::provider::followers::FOLLOWERS].clone()
}

#[test]
fn an_air_task_is_announced_with_its_mark_and_ended_with_its_calls_end() {
    let (mut d, updates) = air_task_turn();
    let marked = updates.last().unwrap();
    assert_eq!(
        marked["_meta"]["jetbrains"]["air"]["asyncTasks"]["backgrounded"],
        true
    );
    assert_eq!(
        followers(marked),
        json!([{"sessionUpdate": "async_task_spawned", "asyncTaskId": "t1/call_9", "name": "cargo test",
            "taskType": "shell", "showInTranscript": false, "canStop": true, "toolCallId": "t1/call_9"}]),
        "{marked}"
    );
    let state = |updates: &[Value]| followers(updates.last().unwrap())[0]["state"].clone();
    let mut done = background_command("completed");
    done["exitCode"] = json!(0);
    let (later, _) = run(&mut d, &[item("item/completed", done.clone())]);
    assert_eq!(later.last().unwrap()["status"], "completed", "{later:?}");
    assert_eq!(state(&later), "completed", "{later:?}");

    let (mut d, _) = air_task_turn();
    d.mark_stopped("call_9");
    let mut killed = background_command("failed");
    killed["exitCode"] = json!(-1);
    let (later, _) = run(&mut d, &[item("item/completed", killed)]);
    assert_eq!(state(&later), "stopped", "{later:?}");

    let (mut d, _) = air_task_turn();
    let (later, _) = run(&mut d, &[item("item/completed", background_command("failed"))]);
    assert_eq!(state(&later), "failed", "{later:?}");
}

#[test]
fn an_air_task_no_longer_followed_is_ended_only_when_it_stopped() {
    let stop = |task: Option<TaskEnd>| {
        let (mut d, _) = air_task_turn();
        let mut out = Vec::new();
        d.stop_following(ToolCallStatus::Failed, "gone", task, &mut out);
        let out: Vec<Value> = out.iter().map(|u| serde_json::to_value(u).unwrap()).collect();
        assert!(!d.following());
        followers(out.last().unwrap())
    };
    assert_eq!(stop(Some(TaskEnd::Failed))[0]["state"], "failed");
    assert!(
        stop(None).is_null(),
        "a command still running is not said to have ended"
    );
}

#[test]
fn a_plain_client_gets_no_task_updates() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[
            item("item/started", background_command("inProgress")),
            (
                "turn/completed",
                json!({"turn": {"id": "tu", "status": "completed"}}),
            ),
            item("item/completed", background_command("completed")),
        ],
    );
    assert!(updates.iter().all(|u| followers(u).is_null()), "{updates:?}");
}

#[test]
fn an_air_client_gets_each_messages_phase_on_its_chunks() {
    let messages = [
        item(
            "item/started",
            json!({"type": "agentMessage", "id": "m1", "text": "", "phase": "commentary"}),
        ),
        delta("m1", "Looking"),
        item(
            "item/completed",
            json!({"type": "agentMessage", "id": "m1", "text": "Looking around", "phase": "commentary"}),
        ),
        item(
            "item/completed",
            json!({"type": "agentMessage", "id": "m2", "text": "Done.", "phase": "final_answer"}),
        ),
        item(
            "item/completed",
            json!({"type": "agentMessage", "id": "m3", "text": "No phase.", "phase": null}),
        ),
    ];
    let phases = |air: Option<acplb_core::capabilities::Air>| -> Vec<Value> {
        let mut d = AppDecoder::new(DecoderOptions {
            id_prefix: "t1/".into(),
            air,
            ..DecoderOptions::new("/workspace")
        });
        run(&mut d, &messages)
            .0
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .map(|u| u["_meta"]["jetbrains"]["air"]["phase"].clone())
            .collect()
    };
    let air = acplb_core::capabilities::Air {
        capabilities: Vec::new(),
    };
    assert_eq!(
        phases(Some(air)),
        [
            json!("commentary"),
            json!("commentary"),
            json!("final_answer"),
            Value::Null
        ]
    );
    assert!(phases(None).iter().all(Value::is_null));
}

#[test]
fn an_air_client_without_compaction_updates_sees_a_compaction_as_the_peers_tool_call() {
    let compacting = [
        item("item/started", json!({"type": "contextCompaction", "id": "c1"})),
        item("item/completed", json!({"type": "contextCompaction", "id": "c1"})),
        item("item/started", json!({"type": "contextCompaction", "id": "c2"})),
        (
            "turn/completed",
            json!({"turn": {"id": "tu", "status": "interrupted"}}),
        ),
    ];
    let air = acplb_core::capabilities::Air {
        capabilities: Vec::new(),
    };
    let mut d = AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        air: Some(air),
        ..DecoderOptions::new("/workspace")
    });
    let (updates, _) = run(&mut d, &compacting);
    let mark = json!({"jetbrains": {"air": {"version": 1, "contextCompaction": {"version": 1}}}});
    let seen: Vec<(Value, Value, Value)> = updates
        .iter()
        .map(|u| (u["toolCallId"].clone(), u["status"].clone(), u["_meta"].clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (json!("t1/c1"), json!("in_progress"), mark.clone()),
            (json!("t1/c1"), json!("completed"), mark.clone()),
            (json!("t1/c2"), json!("in_progress"), mark.clone()),
            (json!("t1/c2"), json!("failed"), mark),
        ],
        "{updates:?}"
    );
    assert_eq!(updates[0]["title"], "Compact conversation");
    assert_eq!(updates[0]["kind"], "think");
    // A plain client keeps its words.
    let (plain, _) = run(&mut decoder(), &compacting[..2]);
    assert!(
        plain.iter().all(|u| u["sessionUpdate"] != "tool_call"),
        "{plain:?}"
    );
}

#[test]
fn an_air_client_with_typed_failures_gets_each_retry_as_a_warning_of_the_turns_incident() {
    let mut d = AppDecoder::new(DecoderOptions {
        id_prefix: "t1/".into(),
        air: Some(acplb_core::capabilities::Air {
            capabilities: vec!["sessionFailure".into()],
        }),
        ..DecoderOptions::new("/workspace")
    });
    let retry = |n: u32| {
        (
            "error",
            json!({"error": {"message": format!("Reconnecting... {n}/2"),
                "codexErrorInfo": {"responseStreamDisconnected": {"httpStatusCode": null}}},
                "willRetry": true, "threadId": "th", "turnId": "tu-9"}),
        )
    };
    let (updates, _) = run(&mut d, &[retry(1), retry(2)]);
    let failures: Vec<&Value> = updates
        .iter()
        .map(|u| &u["_meta"]["jetbrains"]["air"]["sessionFailure"])
        .collect();
    assert_eq!(failures.len(), 2, "{updates:?}");
    for (n, f) in failures.iter().enumerate() {
        assert_eq!(f["id"], "tu-9:error");
        assert_eq!(f["revision"], n + 1);
        assert_eq!(f["severity"], "warning");
        assert_eq!(f["category"], "connection");
    }
    let completed = json!({"threadId": "th", "turn": {"id": "tu-9", "status": "failed",
        "error": {"message": "stream disconnected", "codexErrorInfo": "serverOverloaded"}}});
    run(&mut d, &[("turn/completed", completed)]);
    let (kind, incident) = d.failure(Some("tu-9"));
    assert_eq!(kind, acplb_core::provider::FailureKind::Overloaded);
    assert_eq!((incident.id.as_str(), incident.revision), ("tu-9:error", 2));
}

#[test]
fn without_typed_failures_a_retry_is_a_warning_and_a_failure_begins_its_incident() {
    let mut d = decoder();
    let (updates, _) = run(
        &mut d,
        &[(
            "error",
            json!({"error": {"message": "Reconnecting... 1/2"}, "willRetry": true, "turnId": "tu"}),
        )],
    );
    assert!(
        texts(&updates).iter().any(|t| t.contains("Reconnecting")),
        "{updates:?}"
    );
    let (kind, incident) = d.failure(Some("tu"));
    assert_eq!(kind, acplb_core::provider::FailureKind::ProviderError);
    assert_eq!((incident.id.as_str(), incident.revision), ("tu:error", 0));
}
