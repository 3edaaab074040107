//! Tests of `sse.rs`.

use super::*;

fn kinds(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(SseEvent::kind).collect()
}

#[test]
fn encode_frames_one_event_with_type_first() {
    let event = SseEvent::new("response.output_text.delta", json!({"delta": "a\nb"}));
    assert_eq!(
        event.encode(),
        Bytes::from_static(b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"a\\nb\"}\n\n")
    );
}

#[test]
fn a_message_response_has_the_full_lifecycle_and_usage() {
    let ids = IdGen::default();
    let mut builder = ResponseEvents::start(&ids, "gpt-5.5");
    builder.reasoning(&["thinking"]);
    builder.message("hi", "final_answer");
    let events = builder.completed(Usage::default());
    assert_eq!(
        kinds(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(events[0].data["response"]["id"], "resp_0001");
    assert_eq!(events[0].data["response"]["model"], "gpt-5.5");
    assert_eq!(
        events[13].data,
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message",
            "id": "msg_0003", "role": "assistant", "status": "completed", "phase": "final_answer",
            "content": [{"type": "output_text", "text": "hi", "annotations": []}]}})
    );
    assert_eq!(
        events[14].data["response"]["usage"],
        json!({"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 200}, "output_tokens": 48,
            "output_tokens_details": {"reasoning_tokens": 16}, "total_tokens": 1248})
    );
}

#[test]
fn tool_calls_carry_unique_call_ids_and_final_arguments() {
    let ids = IdGen::default();
    let mut builder = ResponseEvents::start(&ids, "m");
    builder.function_call("echo", Some("mcp__mockmcp"), r#"{"text":"x"}"#);
    builder.custom_tool_call("apply_patch", "*** Begin Patch\n*** End Patch\n");
    builder.tool_search_call("mockmcp echo", 4);
    let events = builder.failed("server_error", "boom");
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e.kind() == "response.output_item.done")
        .map(|e| &e.data["item"])
        .collect();
    assert_eq!(
        *done[0],
        json!({"type": "function_call", "id": "fc_0002", "call_id": "call_0003", "name": "echo",
            "arguments": "{\"text\":\"x\"}", "status": "completed", "namespace": "mcp__mockmcp"})
    );
    assert_eq!(done[1]["input"], "*** Begin Patch\n*** End Patch\n");
    assert_eq!(done[2]["arguments"], json!({"query": "mockmcp echo", "limit": 4}));
    let call_ids: Vec<&Value> = done.iter().map(|item| &item["call_id"]).collect();
    assert_eq!(
        call_ids,
        [&json!("call_0003"), &json!("call_0005"), &json!("call_0007")]
    );
    let last = events.last().unwrap();
    assert_eq!(last.kind(), "response.failed");
    assert_eq!(
        last.data["response"]["error"],
        json!({"code": "server_error", "message": "boom"})
    );
}

#[test]
fn truncation_leaves_a_message_open_and_sends_no_terminal_event() {
    let ids = IdGen::default();
    let builder = ResponseEvents::start(&ids, "m");
    let events = builder.truncated(Some("cut off"));
    assert_eq!(
        kinds(&events),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta"
        ]
    );
}

#[test]
fn text_is_streamed_in_word_pieces_that_add_up() {
    let text = "The directory listing succeeded. Output began: a | b";
    let cut = pieces(text);
    assert_eq!(
        cut,
        ["The directory listing ", "succeeded. Output ", "began: a | b"]
    );
    assert_eq!(cut.concat(), text);
    assert_eq!(pieces(""), [""]);
    assert_eq!(pieces("short"), ["short"]);
    let long_word = "x".repeat(40);
    assert_eq!(pieces(&long_word), [long_word.as_str()]);
    let multi = "ünïcödé wörds ünïcödé wörds ünïcödé\n\nnext paragraph";
    assert_eq!(pieces(multi).concat(), multi);
    assert!(pieces(multi).len() > 1);
}

#[test]
fn a_long_message_has_one_delta_event_per_piece() {
    let ids = IdGen::default();
    let mut builder = ResponseEvents::start(&ids, "m");
    let text = "Hello! I am the mock model. 2 + 2 = 4.";
    builder.message(text, "final_answer");
    builder.reasoning(&[
        "**Answering**\n\nThe user wants a greeting; reply briefly.",
        "Second part.",
    ]);
    let events = builder.completed(Usage::default());
    let deltas = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.kind() == kind)
            .map(|e| e.data["delta"].as_str().unwrap().to_owned())
            .collect()
    };
    let message = deltas("response.output_text.delta");
    assert_eq!(message.len(), 3, "{message:?}");
    assert_eq!(message.concat(), text);
    let reasoning = deltas("response.reasoning_summary_text.delta");
    assert!(reasoning.len() > 1, "{reasoning:?}");
    assert_eq!(
        reasoning.concat(),
        "**Answering**\n\nThe user wants a greeting; reply briefly.Second part."
    );
    let parts: Vec<&Value> = events
        .iter()
        .filter(|e| e.kind() == "response.reasoning_summary_part.added")
        .map(|e| &e.data["summary_index"])
        .collect();
    assert_eq!(parts, [&json!(0), &json!(1)]);
    let done = &events[events.len() - 2].data["item"]["summary"];
    assert_eq!(done[1], json!({"type": "summary_text", "text": "Second part."}));
}

#[test]
fn web_search_has_its_progress_events() {
    let ids = IdGen::default();
    let mut builder = ResponseEvents::start(&ids, "m");
    builder.web_search_call("acp");
    let events = builder.completed(Usage::default());
    assert_eq!(
        kinds(&events)[2..7],
        [
            "response.output_item.added",
            "response.web_search_call.in_progress",
            "response.web_search_call.searching",
            "response.web_search_call.completed",
            "response.output_item.done"
        ]
    );
    assert_eq!(
        events[6].data["item"]["action"],
        json!({"type": "search", "query": "acp"})
    );
}
