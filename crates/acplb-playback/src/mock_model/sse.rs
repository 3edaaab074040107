//! Server-Sent Events of the Responses API: framing, ids, and the event sequence of each output item.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use serde_json::{Value, json};

use super::action::Usage;

/// One SSE event: its `event:` name and its `data:` JSON (which repeats the name as `type`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SseEvent {
    pub(crate) data: Value,
}

impl SseEvent {
    /// `fields` must be an object; `type` goes first, as in the real API, for readable logs.
    fn new(kind: &str, fields: Value) -> SseEvent {
        let mut map = serde_json::Map::new();
        map.insert("type".to_owned(), Value::String(kind.to_owned()));
        if let Value::Object(fields) = fields {
            map.extend(fields);
        }
        SseEvent {
            data: Value::Object(map),
        }
    }

    /// The event name (`response.created`, …).
    pub(crate) fn kind(&self) -> &str {
        self.data.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// `event: <type>\ndata: <json>\n\n`; JSON never contains a raw newline, so one `data:` line suffices.
    pub(crate) fn encode(&self) -> Bytes {
        Bytes::from(format!("event: {}\ndata: {}\n\n", self.kind(), self.data))
    }
}

/// Ids unique for the life of one server (`resp_0001`, `call_0002`, …), so call ids never collide
/// within a thread.
#[derive(Debug, Default)]
pub(crate) struct IdGen(AtomicU64);

impl IdGen {
    pub(crate) fn next(&self, prefix: &str) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        format!("{prefix}_{n:04}")
    }
}

/// Builds the events of one response: `response.created`, items, and an ending.
#[derive(Debug)]
pub(crate) struct ResponseEvents<'a> {
    ids: &'a IdGen,
    response_id: String,
    events: Vec<SseEvent>,
    next_index: u64,
}

impl<'a> ResponseEvents<'a> {
    /// Starts a response with `response.created` and `response.in_progress`.
    pub(crate) fn start(ids: &'a IdGen, model: &str) -> Self {
        let response_id = ids.next("resp");
        let response =
            json!({"id": response_id, "object": "response", "status": "in_progress", "model": model});
        let events = vec![
            SseEvent::new("response.created", json!({"response": response})),
            SseEvent::new("response.in_progress", json!({"response": response})),
        ];
        ResponseEvents {
            ids,
            response_id,
            events,
            next_index: 0,
        }
    }

    fn push(&mut self, kind: &str, fields: Value) {
        self.events.push(SseEvent::new(kind, fields));
    }

    fn open_item(&mut self, item: &Value) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": item}),
        );
        index
    }

    fn close_item(&mut self, index: u64, item: &Value) {
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
    }

    /// A reasoning item with one summary part per element of `parts`, each streamed in several
    /// deltas (see [`pieces`]).
    pub(crate) fn reasoning(&mut self, parts: &[&str]) {
        let id = self.ids.next("rs");
        let index = self.open_item(&json!({"type": "reasoning", "id": id, "summary": []}));
        for (summary_index, text) in parts.iter().enumerate() {
            let at = json!({"item_id": id, "output_index": index, "summary_index": summary_index});
            self.push(
                "response.reasoning_summary_part.added",
                with(&at, json!({"part": summary_part("")})),
            );
            for piece in pieces(text) {
                self.push(
                    "response.reasoning_summary_text.delta",
                    with(&at, json!({"delta": piece})),
                );
            }
            self.push(
                "response.reasoning_summary_text.done",
                with(&at, json!({"text": text})),
            );
            self.push(
                "response.reasoning_summary_part.done",
                with(&at, json!({"part": summary_part(text)})),
            );
        }
        let summary: Vec<Value> = parts.iter().map(|text| summary_part(text)).collect();
        self.close_item(index, &json!({"type": "reasoning", "id": id, "summary": summary}));
    }

    /// An assistant message with one `output_text` part, streamed in several deltas (see [`pieces`]).
    pub(crate) fn message(&mut self, text: &str, phase: &str) {
        let (id, index, at) = self.open_message(phase);
        for piece in pieces(text) {
            self.push("response.output_text.delta", with(&at, json!({"delta": piece})));
        }
        self.push("response.output_text.done", with(&at, json!({"text": text})));
        self.push(
            "response.content_part.done",
            with(&at, json!({"part": output_text(text)})),
        );
        let done = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
            "phase": phase, "content": [output_text(text)]});
        self.close_item(index, &done);
    }

    fn open_message(&mut self, phase: &str) -> (String, u64, Value) {
        let id = self.ids.next("msg");
        let added = json!({"type": "message", "id": id, "role": "assistant", "status": "in_progress",
            "phase": phase, "content": []});
        let index = self.open_item(&added);
        let at = json!({"item_id": id, "output_index": index, "content_index": 0});
        self.push(
            "response.content_part.added",
            with(&at, json!({"part": output_text("")})),
        );
        (id, index, at)
    }

    /// A function call; `arguments` is already JSON-encoded.
    pub(crate) fn function_call(&mut self, name: &str, namespace: Option<&str>, arguments: &str) {
        let id = self.ids.next("fc");
        let mut item = json!({"type": "function_call", "id": id, "call_id": self.ids.next("call"),
            "name": name, "arguments": "", "status": "in_progress"});
        if let (Some(ns), Value::Object(map)) = (namespace, &mut item) {
            map.insert("namespace".to_owned(), Value::String(ns.to_owned()));
        }
        let index = self.open_item(&item);
        let at = json!({"item_id": id, "output_index": index});
        self.push(
            "response.function_call_arguments.delta",
            with(&at, json!({"delta": arguments})),
        );
        self.push(
            "response.function_call_arguments.done",
            with(&at, json!({"arguments": arguments})),
        );
        item["arguments"] = Value::String(arguments.to_owned());
        item["status"] = Value::String("completed".to_owned());
        self.close_item(index, &item);
    }

    /// A freeform tool call such as `apply_patch`.
    pub(crate) fn custom_tool_call(&mut self, name: &str, input: &str) {
        let id = self.ids.next("ctc");
        let mut item = json!({"type": "custom_tool_call", "id": id, "call_id": self.ids.next("call"),
            "name": name, "input": "", "status": "in_progress"});
        let index = self.open_item(&item);
        let at = json!({"item_id": id, "output_index": index});
        self.push(
            "response.custom_tool_call_input.delta",
            with(&at, json!({"delta": input})),
        );
        self.push(
            "response.custom_tool_call_input.done",
            with(&at, json!({"input": input})),
        );
        item["input"] = Value::String(input.to_owned());
        item["status"] = Value::String("completed".to_owned());
        self.close_item(index, &item);
    }

    /// A client-executed tool search.
    pub(crate) fn tool_search_call(&mut self, query: &str, limit: u32) {
        let mut item = json!({"type": "tool_search_call", "id": self.ids.next("ts"),
            "call_id": self.ids.next("call"), "execution": "client", "status": "in_progress",
            "arguments": {"query": query, "limit": limit}});
        let index = self.open_item(&item);
        item["status"] = Value::String("completed".to_owned());
        self.close_item(index, &item);
    }

    /// A provider-side web search.
    pub(crate) fn web_search_call(&mut self, query: &str) {
        let id = self.ids.next("ws");
        let action = json!({"type": "search", "query": query});
        let index = self.open_item(
            &json!({"type": "web_search_call", "id": id, "status": "in_progress", "action": action}),
        );
        let at = json!({"item_id": id, "output_index": index});
        for kind in ["in_progress", "searching", "completed"] {
            self.push(&format!("response.web_search_call.{kind}"), at.clone());
        }
        self.close_item(
            index,
            &json!({"type": "web_search_call", "id": id, "status": "completed", "action": action}),
        );
    }

    /// Ends with `response.completed` and the usage.
    pub(crate) fn completed(mut self, usage: Usage) -> Vec<SseEvent> {
        let usage = json!({
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        });
        let response =
            json!({"id": self.response_id, "object": "response", "status": "completed", "usage": usage});
        self.push("response.completed", json!({"response": response}));
        self.events
    }

    /// Ends with `response.failed`.
    pub(crate) fn failed(mut self, code: &str, message: &str) -> Vec<SseEvent> {
        let response = json!({"id": self.response_id, "object": "response", "status": "failed",
            "error": {"code": code, "message": message}});
        self.push("response.failed", json!({"response": response}));
        self.events
    }

    /// Ends without a terminal event, optionally inside an open message holding `partial_text`.
    pub(crate) fn truncated(mut self, partial_text: Option<&str>) -> Vec<SseEvent> {
        if let Some(text) = partial_text {
            let (_, _, at) = self.open_message("final_answer");
            self.push("response.output_text.delta", with(&at, json!({"delta": text})));
        }
        self.events
    }
}

/// Shortest piece of streamed text: a delta ends at the first word end at or after this many bytes.
const PIECE_BYTES: usize = 16;

/// `text` cut into the deltas a real model would stream: whole words (with the whitespace after
/// them) adding up to at least [`PIECE_BYTES`] bytes each, so a sentence arrives in a few pieces
/// and a step's `delay_ms` applies between them. Concatenated they give `text` back; an empty
/// text is one empty delta.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        // A word ends where whitespace gives way to the next word.
        if in_space && !space && i - start >= PIECE_BYTES {
            out.push(&text[start..i]);
            start = i;
        }
        in_space = space;
    }
    if start < text.len() || out.is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// `base` (an object) with the fields of `extra` (an object) added.
fn with(base: &Value, extra: Value) -> Value {
    let mut out = base.clone();
    if let (Value::Object(out_map), Value::Object(extra_map)) = (&mut out, extra) {
        out_map.extend(extra_map);
    }
    out
}

fn summary_part(text: &str) -> Value {
    json!({"type": "summary_text", "text": text})
}

fn output_text(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": []})
}

#[cfg(test)]
mod tests {
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
}
