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
mod tests;
