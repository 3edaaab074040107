//! Playing one recorded stream of an app-server process: the process's own `initialize`
//! exchange, or one session's turns. Recorded `recv` messages are written as they come (the
//! results of acplb's requests under acplb's ids); at each recorded `sent` message the stream
//! waits until acplb sent it, and an answer to a server request is compared with the recorded one.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Shared;
use super::wire::{self, Router};
use crate::scenario::{EventKind, ProviderEvent};
use crate::standin::Speed;

/// One stream to play.
#[derive(Debug)]
pub(super) struct Stream {
    /// Its place in the output (0: the process, `k`: session `k`).
    pub(super) order: usize,
    /// For notes: `app-server 1, <session-1>`.
    pub(super) label: String,
    /// Its events, each with the turn it belongs to (0 for the process's own).
    pub(super) events: Vec<(u64, ProviderEvent)>,
}

impl Stream {
    /// The recorded `sent` and `recv` messages (transcript form), for the router.
    pub(super) fn messages(&self) -> (Vec<Value>, Vec<Value>) {
        let (mut sent, mut recv) = (Vec::new(), Vec::new());
        for (_, event) in &self.events {
            match &event.kind {
                EventKind::Sent(l) => sent.push(serde_json::from_str(l).unwrap_or(Value::Null)),
                EventKind::Recv(l) => recv.push(serde_json::from_str(l).unwrap_or(Value::Null)),
                _ => {}
            }
        }
        (sent, recv)
    }
}

/// How a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamEnd {
    /// Every event was played.
    Done,
    /// The recording says the process died here.
    Gone,
    /// acplb closed the pipe while the stream waited for one of its messages.
    Stuck,
}

/// Plays stream number `index` (its position in `shared`).
pub(super) async fn play(shared: &Shared, index: usize, stream: &Stream) -> StreamEnd {
    // acplb's requests this stream took and has not answered yet: (method, acplb's id).
    let mut pending: VecDeque<(String, Value)> = VecDeque::new();
    // The moment (and recorded time) of the last message from acplb: delays count from there.
    let mut anchor = (Instant::now(), 0u64);
    for (i, (turn, event)) in stream.events.iter().enumerate() {
        let at = || format!("{} turn {turn} (line {})", stream.label, event.line);
        if shared.speed == Speed::Real && !matches!(event.kind, EventKind::Sent(_)) {
            let wait = Duration::from_millis(event.t_ms.saturating_sub(anchor.1));
            tokio::time::sleep_until((anchor.0 + wait).into()).await;
        }
        match &event.kind {
            EventKind::Sent(line) => {
                let want: Value = serde_json::from_str(line).unwrap_or(Value::Null);
                let rest: Vec<Value> = stream.events[i..]
                    .iter()
                    .filter_map(|(_, e)| match &e.kind {
                        EventKind::Sent(l) => serde_json::from_str(l).ok(),
                        _ => None,
                    })
                    .collect();
                let Some((got, id)) = shared.take(index, &want, &Router::methods(&rest), &at()).await else {
                    shared.note(&format!(
                        "{}: acplb never sent {} (it closed the pipe first)",
                        at(),
                        describe(&want)
                    ));
                    return StreamEnd::Stuck;
                };
                anchor = (Instant::now(), event.t_ms);
                if wire::is_answer(&want) {
                    compare_answer(shared, &want, &got, &at());
                } else if let (Some(method), Some(id)) = (want.get("method").and_then(Value::as_str), id) {
                    pending.push_back((method.to_owned(), id));
                }
            }
            EventKind::Recv(line) => {
                let msg: Value = serde_json::from_str(line).unwrap_or(Value::Null);
                if msg.get("gone").is_some() {
                    return StreamEnd::Gone;
                }
                emit(shared, index, &msg, &mut pending, &at());
            }
            EventKind::Stderr(line) => shared.stderr(line),
            EventKind::Write { path, text } => shared.write_file(path, Some(text)),
            EventKind::Delete { path } => shared.write_file(path, None),
            EventKind::Stdout(_) => {}
        }
    }
    StreamEnd::Done
}

/// Writes a recorded message: a result goes to acplb's waiting request of that method.
fn emit(shared: &Shared, index: usize, msg: &Value, pending: &mut VecDeque<(String, Value)>, at: &str) {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or_default();
    let outcome = ["result", "error"].into_iter().find(|k| msg.get(*k).is_some());
    match (msg.get("id"), outcome) {
        (None, Some(key)) => {
            let Some(pos) = pending.iter().position(|(m, _)| m == method) else {
                shared.note(&format!(
                    "{at}: the recording answers a `{method}` request that acplb did not send"
                ));
                return;
            };
            let Some((_, id)) = pending.remove(pos) else {
                return;
            };
            let mut out = json!({ "id": id });
            out[key] = msg[key].clone();
            shared.stdout(&out);
        }
        (Some(id), _) => {
            // A request of Codex's; acplb's answer is routed back to this stream.
            shared.router.borrow_mut().asked(id, index, method);
            shared.stdout(msg);
        }
        (None, None) => shared.stdout(msg),
    }
}

/// Notes an answer that differs from the recorded one (the decision Codex acted on).
fn compare_answer(shared: &Shared, want: &Value, got: &Value, at: &str) {
    if want == got {
        return;
    }
    let id = want.get("id").cloned().unwrap_or(Value::Null);
    let method = shared
        .router
        .borrow()
        .method_of(&id)
        .map_or_else(|| "a request".to_owned(), |m| format!("`{m}`"));
    let body = |v: &Value| {
        v.get("result")
            .map(|r| format!("result {r}"))
            .or_else(|| v.get("error").map(|e| format!("error {e}")))
            .unwrap_or_else(|| v.to_string())
    };
    shared.note(&format!(
        "{at}: acplb answered Codex's {method} (id {id}) with {}, but the recording answered {}; what Codex did next was recorded for the recorded answer (re-record the scenario if the new answer is right)",
        body(got),
        body(want)
    ));
}

/// A recorded message in words, for notes.
pub(super) fn describe(msg: &Value) -> String {
    match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
        (Some(method), _) => format!("`{method}`"),
        (None, Some(id)) => format!("its answer to Codex's request {id}"),
        (None, None) => msg.to_string(),
    }
}
