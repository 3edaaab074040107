//! The stand-in's view of acplb's JSON-RPC: what a message is, its transcript form (as the
//! scenario records it), and which recorded stream it belongs to.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

/// acplb's message as a transcript records it: requests `{"method","params"}` (no id),
/// notifications `{"method"[,"params"]}`, answers `{"id","result"}` or `{"id","error"}`.
pub(super) fn transcript_form(msg: &Value) -> Value {
    let method = msg.get("method").cloned();
    let id = msg.get("id").filter(|id| !id.is_null()).cloned();
    match (method, id) {
        (Some(method), _) => {
            let mut out = json!({ "method": method });
            if let Some(params) = msg.get("params") {
                out["params"] = params.clone();
            }
            out
        }
        (None, Some(id)) => {
            let mut out = json!({ "id": id });
            match (msg.get("result"), msg.get("error")) {
                (Some(result), _) => out["result"] = result.clone(),
                (None, Some(error)) => out["error"] = error.clone(),
                (None, None) => out["result"] = Value::Null,
            }
            out
        }
        (None, None) => msg.clone(),
    }
}

/// The thread a message names (`params.threadId`).
pub(super) fn thread_of(msg: &Value) -> Option<&str> {
    msg.pointer("/params/threadId").and_then(Value::as_str)
}

/// Whether a message from acplb is an answer (no method, an id).
pub(super) fn is_answer(msg: &Value) -> bool {
    msg.get("method").is_none() && msg.get("id").is_some_and(|id| !id.is_null())
}

/// Whether acplb's message `got` (transcript form) is the recorded one `want` stands for: the
/// same answer id, or the same method (and thread, when the recording names one).
pub(super) fn matches(want: &Value, got: &Value) -> bool {
    if is_answer(want) {
        return is_answer(got) && want.get("id") == got.get("id");
    }
    want.get("method").is_some()
        && want.get("method") == got.get("method")
        && thread_of(want).is_none_or(|t| thread_of(got) == Some(t))
}

/// Decides which stream (0: the process's own, `k`: a session's) each message acplb sends
/// belongs to, the moment it arrives.
#[derive(Debug, Default)]
pub(super) struct Router {
    /// Thread id → stream.
    threads: HashMap<String, usize>,
    /// Per stream: how many requests of each method without a thread it still expects.
    unthreaded: Vec<HashMap<String, usize>>,
    /// Server request id (as JSON text) → (stream, method).
    asked: HashMap<String, (usize, String)>,
}

impl Router {
    /// A router for streams whose recorded `sent` messages are `sent[stream]` (transcript form)
    /// and whose received messages are `recv[stream]`.
    pub(super) fn new(sent: &[Vec<Value>], recv: &[Vec<Value>]) -> Self {
        let mut router = Router {
            unthreaded: vec![HashMap::new(); sent.len()],
            ..Router::default()
        };
        for (stream, messages) in sent.iter().enumerate() {
            for msg in messages {
                match (msg.get("method").and_then(Value::as_str), thread_of(msg)) {
                    (Some(_), Some(thread)) => {
                        router.threads.entry(thread.to_owned()).or_insert(stream);
                    }
                    (Some(method), None) => {
                        *router.unthreaded[stream].entry(method.to_owned()).or_default() += 1;
                    }
                    _ => {}
                }
            }
        }
        for (stream, messages) in recv.iter().enumerate() {
            for msg in messages {
                for pointer in ["/result/thread/id", "/params/threadId"] {
                    if let Some(thread) = msg.pointer(pointer).and_then(Value::as_str) {
                        router.threads.entry(thread.to_owned()).or_insert(stream);
                    }
                }
            }
        }
        router
    }

    /// The server sent request `id` (`method`) from `stream`.
    pub(super) fn asked(&mut self, id: &Value, stream: usize, method: &str) {
        self.asked.insert(id.to_string(), (stream, method.to_owned()));
    }

    /// The method of server request `id`, if the stand-in sent it.
    pub(super) fn method_of(&self, id: &Value) -> Option<&str> {
        self.asked.get(&id.to_string()).map(|(_, m)| m.as_str())
    }

    /// The stream of `msg` (transcript form).
    pub(super) fn route(&mut self, msg: &Value) -> usize {
        if is_answer(msg) {
            return msg
                .get("id")
                .and_then(|id| self.asked.get(&id.to_string()))
                .map_or(0, |(stream, _)| *stream);
        }
        if let Some(thread) = thread_of(msg) {
            return self.threads.get(thread).copied().unwrap_or(0);
        }
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            return 0;
        };
        // The first stream still expecting one (a `thread/start` of the next session).
        for (stream, left) in self.unthreaded.iter_mut().enumerate() {
            if let Some(n) = left.get_mut(method).filter(|n| **n > 0) {
                *n -= 1;
                return stream;
            }
        }
        0
    }

    /// The methods a stream's remaining recorded messages use (to tell strays from early ones).
    pub(super) fn methods(sent: &[Value]) -> HashSet<String> {
        sent.iter()
            .filter_map(|m| m.get("method").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_forms_drop_ids_of_requests_and_keep_those_of_answers() {
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "turn/start", "params": {"threadId": "t"}});
        assert_eq!(
            transcript_form(&request).to_string(),
            r#"{"method":"turn/start","params":{"threadId":"t"}}"#
        );
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"decision": "accept"}});
        assert_eq!(
            transcript_form(&answer).to_string(),
            r#"{"id":0,"result":{"decision":"accept"}}"#
        );
        let note = json!({"jsonrpc": "2.0", "method": "initialized"});
        assert_eq!(transcript_form(&note).to_string(), r#"{"method":"initialized"}"#);
    }

    #[test]
    fn routing_by_thread_by_order_and_by_server_request() {
        let sent = vec![
            vec![json!({"method": "initialize", "params": {}})],
            vec![json!({"method": "thread/start", "params": {}})],
            vec![json!({"method": "thread/start", "params": {}})],
        ];
        let recv = vec![
            vec![],
            vec![json!({"method": "thread/start", "result": {"thread": {"id": "a"}}})],
            vec![json!({"method": "thread/start", "result": {"thread": {"id": "b"}}})],
        ];
        let mut router = Router::new(&sent, &recv);
        assert_eq!(router.route(&json!({"method": "initialize", "params": {}})), 0);
        assert_eq!(router.route(&json!({"method": "thread/start", "params": {}})), 1);
        assert_eq!(router.route(&json!({"method": "thread/start", "params": {}})), 2);
        assert_eq!(
            router.route(&json!({"method": "turn/start", "params": {"threadId": "b"}})),
            2
        );
        router.asked(&json!(4), 1, "item/fileChange/requestApproval");
        assert_eq!(router.route(&json!({"id": 4, "result": {}})), 1);
        assert_eq!(
            router.method_of(&json!(4)),
            Some("item/fileChange/requestApproval")
        );
        assert!(matches(
            &json!({"method": "turn/start", "params": {"threadId": "b"}}),
            &json!({"method": "turn/start", "params": {"threadId": "b", "x": 1}})
        ));
        assert!(!matches(
            &json!({"id": 4, "result": {}}),
            &json!({"id": 5, "result": {}})
        ));
    }
}
