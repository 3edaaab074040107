//! A small JSON-RPC 2.0 peer over a child's stdio, as `codex app-server` speaks it: our
//! requests with numeric ids and their answers, notifications, and the server's own requests,
//! routed to the session whose thread they name.
//!
//! The server omits `"jsonrpc"` in what it sends; we include it. One JSON object per line.
//!
//! Every request has a time limit; a server that does not answer within it is declared dead
//! ([`Rpc::wedged`] tells the reader to stop it). Error answers are redacted as they come in.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::liveness::{Hold, ReadClock};
use super::served::ServedSecrets;

/// How long a request declared unanswered waits for the reader to stop the server and say why.
const STOPPING: Duration = Duration::from_secs(5);

/// Something the server sent that belongs to one thread.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A notification.
    Notification {
        /// Its method.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A request the server waits on; answer it with [`Rpc::respond`] using `id`.
    Request {
        /// The server's id for it.
        id: Value,
        /// Its method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// The server is gone; nothing more comes.
    Gone(Gone),
}

/// Why the server stopped answering, as the editor should read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gone {
    /// How the process ended (`exit status: 3`, `signal: 9`), or why it is unusable.
    pub(crate) status: String,
    /// The end of its stderr, redacted.
    pub(crate) stderr_tail: String,
    /// Set when acplb stopped the server because it stopped answering: what it did not answer
    /// (`` `turn/start` within 1m ``).
    pub(crate) unanswered: Option<String>,
}

impl Gone {
    /// The connection closed with no word from the reader.
    pub(crate) fn closed() -> Self {
        Self {
            status: "the connection was closed".into(),
            stderr_tail: String::new(),
            unanswered: None,
        }
    }
}

/// A request that did not get a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RpcFailure {
    /// The server answered with an error.
    #[error("{message} (code {code})")]
    Error {
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The server went away before answering.
    #[error("codex app-server stopped ({})", .0.status)]
    Gone(Gone),
}

type Pending = oneshot::Sender<Result<Value, RpcFailure>>;

/// How many messages may wait for running turns before the reader stops reading the server:
/// with the editor's own backpressure this bounds acplb's memory whatever Codex prints.
const BACKLOG_LIMIT: usize = 256;

/// Where one thread's messages go.
#[derive(Debug)]
struct Route {
    tx: mpsc::UnboundedSender<Incoming>,
    /// A turn runs and takes them; between turns notifications are dropped (they belong to
    /// no turn) and requests refused, so an idle session holds nothing.
    active: bool,
}

/// Our side of the connection. Lines go out through `out` (a writer task owns the pipe);
/// [`Rpc::dispatch`] is fed every line the server sends.
#[derive(Debug)]
pub(crate) struct Rpc {
    out: mpsc::UnboundedSender<String>,
    next_id: Cell<i64>,
    pending: RefCell<HashMap<i64, Pending>>,
    threads: RefCell<HashMap<String, Route>>,
    /// Messages routed to a running turn and not yet taken by it ([`Rpc::took`]).
    backlog: Cell<usize>,
    /// Wakes the reader when the backlog falls below [`BACKLOG_LIMIT`].
    room: tokio::sync::Notify,
    gone: RefCell<Option<Gone>>,
    /// The last `account/rateLimits/updated` params (they name no thread), for `/status`.
    rate_limits: RefCell<Option<Value>>,
    /// The time limit of a request.
    limit: Duration,
    /// What the server did not answer, once it is declared dead; the reader stops it.
    wedged: RefCell<Option<String>>,
    wedge: tokio::sync::Notify,
    /// When the server last sent anything.
    heard: Cell<Instant>,
    /// The time the reader held the server back, which request limits do not count.
    clock: ReadClock,
    /// Redacts what the server says before anyone sees it.
    secrets: ServedSecrets,
}

impl Rpc {
    /// A peer writing its lines to `out`, giving each request `limit` to be answered, redacting
    /// the server's words with `secrets`.
    pub(crate) fn new(
        out: mpsc::UnboundedSender<String>,
        limit: Duration,
        secrets: ServedSecrets,
    ) -> Rc<Self> {
        Rc::new(Self {
            out,
            next_id: Cell::new(1),
            pending: RefCell::new(HashMap::new()),
            threads: RefCell::new(HashMap::new()),
            backlog: Cell::new(0),
            room: tokio::sync::Notify::new(),
            gone: RefCell::new(None),
            rate_limits: RefCell::new(None),
            limit,
            wedged: RefCell::new(None),
            wedge: tokio::sync::Notify::new(),
            heard: Cell::new(Instant::now()),
            clock: ReadClock::default(),
            secrets,
        })
    }

    /// `text` (something the server printed) without any secret of the sessions it served.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.secrets.redact(text)
    }

    /// The reader holds the server back (does not read it) until the guard is dropped.
    pub(crate) fn hold(&self) -> Hold<'_> {
        self.clock.hold()
    }

    /// How long the server has sent nothing.
    pub(crate) fn quiet_for(&self) -> Duration {
        self.heard.get().elapsed()
    }

    /// Whether a turn runs on the server (and so waits on it).
    pub(crate) fn turn_running(&self) -> bool {
        self.threads.borrow().values().any(|r| r.active)
    }

    /// Resolves with what the server did not answer once it is declared dead (cancel-safe).
    pub(crate) async fn wedged(&self) -> String {
        loop {
            if let Some(unanswered) = self.wedged.borrow().clone() {
                return unanswered;
            }
            self.wedge.notified().await;
        }
    }

    /// The server did not answer `unanswered`: the reader stops it, and every waiter hears why.
    fn declare_dead(&self, unanswered: String) {
        if self.gone.borrow().is_some() || self.wedged.borrow().is_some() {
            return;
        }
        tracing::warn!(%unanswered, "codex app-server stopped answering");
        *self.wedged.borrow_mut() = Some(unanswered);
        self.wedge.notify_one();
    }

    /// Whether the server has gone away.
    pub(crate) fn gone(&self) -> Option<Gone> {
        self.gone.borrow().clone()
    }

    /// The account's rate limits as last reported.
    pub(crate) fn rate_limits(&self) -> Option<Value> {
        self.rate_limits.borrow().clone()
    }

    /// Routes what the server sends about `thread_id` to `tx` (replacing an earlier route).
    pub(crate) fn subscribe(&self, thread_id: &str, tx: mpsc::UnboundedSender<Incoming>) {
        if let Some(gone) = self.gone() {
            let _ignored = tx.send(Incoming::Gone(gone));
            return;
        }
        self.threads
            .borrow_mut()
            .insert(thread_id.to_owned(), Route { tx, active: false });
    }

    /// Whether a turn of `thread_id` runs and takes its messages.
    pub(crate) fn set_active(&self, thread_id: &str, active: bool) {
        if let Some(route) = self.threads.borrow_mut().get_mut(thread_id) {
            route.active = active;
        }
    }

    /// A running turn took one message off its channel.
    pub(crate) fn took(&self, msg: &Incoming) {
        if matches!(msg, Incoming::Gone(_)) {
            return;
        }
        let left = self.backlog.get().saturating_sub(1);
        self.backlog.set(left);
        if left < BACKLOG_LIMIT {
            self.room.notify_waiters();
        }
    }

    /// Resolves when running turns have room for more messages (cancel-safe).
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            if self.backlog.get() < BACKLOG_LIMIT || self.gone.borrow().is_some() {
                return;
            }
            notified.await;
        }
    }

    /// Stops routing `thread_id`.
    pub(crate) fn unsubscribe(&self, thread_id: &str) {
        self.threads.borrow_mut().remove(thread_id);
    }

    /// Sends a request and waits for its result, within the request limit.
    pub(crate) async fn request(&self, method: &str, params: Value) -> Result<Value, RpcFailure> {
        self.request_within(method, params, self.limit, &format!("`{method}`"))
            .await
    }

    /// Sends a request and waits for its result. A server that does not answer within `limit`
    /// (time it was held back aside) is declared dead, and the request fails with the reason:
    /// it did not answer `what` (`` `initialize` ``, `a health check`) within `limit`.
    pub(crate) async fn request_within(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
        what: &str,
    ) -> Result<Value, RpcFailure> {
        if let Some(gone) = self.gone() {
            return Err(RpcFailure::Gone(gone));
        }
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, mut rx) = oneshot::channel();
        self.pending.borrow_mut().insert(id, tx);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let answer = match self.clock.within(limit, &mut rx).await {
            Some(answer) => answer,
            None => {
                let unanswered = format!("{what} within {}", humantime::format_duration(limit));
                self.declare_dead(unanswered.clone());
                // The reader stops the server and answers every waiter, this one too, with the
                // reason and its last stderr.
                tokio::time::timeout(STOPPING, rx).await.unwrap_or_else(|_| {
                    Ok(Err(RpcFailure::Gone(Gone {
                        status: "stopped".into(),
                        stderr_tail: String::new(),
                        unanswered: Some(unanswered),
                    })))
                })
            }
        };
        // The sender is dropped only when the connection is torn down.
        answer.unwrap_or_else(|_| Err(RpcFailure::Gone(self.gone().unwrap_or_else(Gone::closed))))
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) {
        let mut msg = json!({ "jsonrpc": "2.0", "method": method });
        if let Some(params) = params {
            msg["params"] = params;
        }
        self.send(&msg);
    }

    /// Answers a server request.
    pub(crate) fn respond(&self, id: &Value, result: Value) {
        let mut msg = json!({ "jsonrpc": "2.0", "id": id });
        msg["result"] = result;
        self.send(&msg);
    }

    /// Refuses a server request.
    pub(crate) fn respond_error(&self, id: &Value, code: i64, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }));
    }

    fn send(&self, msg: &Value) {
        let line = msg.to_string();
        if self.out.send(line).is_err() {
            tracing::debug!("codex app-server's stdin is closed; message dropped");
        }
    }

    /// Handles one line from the server.
    pub(crate) fn dispatch(&self, line: &str) {
        self.heard.set(Instant::now());
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(error = %e, "ignoring a line from codex app-server that is not JSON");
                return;
            }
        };
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = msg.get("id").cloned().filter(|id| !id.is_null());
        match (method, id) {
            (None, Some(id)) => self.on_response(&id, &msg),
            (Some(method), id) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let incoming = match id {
                    Some(id) => Incoming::Request { id, method, params },
                    None => Incoming::Notification { method, params },
                };
                self.route(incoming);
            }
            (None, None) => {
                tracing::warn!("ignoring a message from codex app-server with neither method nor id");
            }
        }
    }

    fn on_response(&self, id: &Value, msg: &Value) {
        let Some(tx) = id.as_i64().and_then(|id| self.pending.borrow_mut().remove(&id)) else {
            tracing::warn!(%id, "codex app-server answered a request acplb did not send");
            return;
        };
        let result = match msg.get("error") {
            Some(error) => Err(RpcFailure::Error {
                code: error.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                message: self.redact(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("(no message)"),
                ),
            }),
            None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
        };
        // The requester may have given up (a cancelled turn); that is fine.
        let _ignored = tx.send(result);
    }

    fn route(&self, incoming: Incoming) {
        let params = match &incoming {
            Incoming::Notification { params, .. } | Incoming::Request { params, .. } => params,
            Incoming::Gone(_) => return,
        };
        let thread = thread_of(params);
        let route = thread.and_then(|t| self.threads.borrow().get(t).map(|r| (r.tx.clone(), r.active)));
        match (route, incoming) {
            (Some((tx, true)), incoming) => match tx.send(incoming) {
                Ok(()) => self.backlog.set(self.backlog.get() + 1),
                Err(mpsc::error::SendError(Incoming::Request { id, method, .. })) => {
                    tracing::debug!(%method, "a request for a session that is gone; declined");
                    self.respond_error(&id, -32603, "the session this was for has ended");
                }
                Err(_) => {}
            },
            (Some((_, false)), Incoming::Request { id, method, .. }) => {
                tracing::warn!(%method, "codex app-server asked something between turns; declined");
                self.respond_error(&id, -32603, "no turn of this session is running");
            }
            (Some((_, false)), Incoming::Notification { method, .. }) => {
                tracing::trace!(%method, "a notification between turns; dropped");
            }
            (None, Incoming::Request { id, method, .. }) => {
                tracing::warn!(%method, "codex app-server asked something no session can answer; declined");
                self.respond_error(&id, -32601, "acplb cannot answer this request");
            }
            (None, Incoming::Notification { method, params }) => {
                if method == "account/rateLimits/updated" {
                    *self.rate_limits.borrow_mut() = Some(params);
                } else {
                    tracing::trace!(%method, "a notification for no session");
                }
            }
            (_, Incoming::Gone(_)) => {}
        }
    }

    /// The server is gone: every waiting request fails and every session hears it.
    pub(crate) fn close(&self, gone: &Gone) {
        *self.gone.borrow_mut() = Some(gone.clone());
        for (_, tx) in self.pending.borrow_mut().drain() {
            let _ignored = tx.send(Err(RpcFailure::Gone(gone.clone())));
        }
        for (_, route) in self.threads.borrow_mut().drain() {
            let _ignored = route.tx.send(Incoming::Gone(gone.clone()));
        }
        self.room.notify_waiters();
    }
}

/// The thread a server message is about: `params.threadId`, or `params.thread.id`
/// (`thread/started`), or `params.conversationId` (legacy requests).
fn thread_of(params: &Value) -> Option<&str> {
    params
        .get("threadId")
        .or_else(|| params.get("thread").and_then(|t| t.get("id")))
        .or_else(|| params.get("conversationId"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> (Rc<Rpc>, mpsc::UnboundedReceiver<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Rpc::new(tx, Duration::from_secs(60), ServedSecrets::default()),
            rx,
        )
    }

    #[tokio::test]
    async fn a_request_gets_its_own_answer_and_errors_carry_the_message() {
        let (rpc, mut out) = peer();
        let first = rpc.request("a", json!({}));
        let second = rpc.request("b", json!({}));
        let both = async {
            let sent: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
            assert_eq!(sent["method"], "a");
            assert_eq!(sent["jsonrpc"], "2.0");
            let sent2: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
            rpc.dispatch(
                &json!({"id": sent2["id"], "error": {"code": -32600, "message": "bad"}}).to_string(),
            );
            rpc.dispatch(&json!({"id": sent["id"], "result": {"ok": 1}}).to_string());
        };
        let (a, b, ()) = tokio::join!(first, second, both);
        assert_eq!(a.unwrap(), json!({"ok": 1}));
        assert_eq!(b.unwrap_err().to_string(), "bad (code -32600)");
    }

    #[tokio::test]
    async fn messages_go_to_the_session_of_their_thread_and_unknown_requests_are_declined() {
        let (rpc, mut out) = peer();
        let (tx, mut rx) = mpsc::unbounded_channel();
        rpc.subscribe("t1", tx);
        rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t1","early":1}}"#);
        rpc.set_active("t1", true);
        rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t1","x":1}}"#);
        rpc.dispatch(r#"{"method":"item/started","params":{"threadId":"t2"}}"#);
        rpc.dispatch(r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"threadId":"t9"}}"#);
        rpc.dispatch("not json");
        match rx.try_recv().unwrap() {
            Incoming::Notification { method, params } => {
                assert_eq!(method, "item/started");
                assert_eq!(params["x"], 1);
            }
            other => panic!("{other:?}"),
        }
        assert!(rx.try_recv().is_err(), "t2's message did not reach t1");
        let refusal: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
        assert_eq!(refusal["id"], 0);
        assert_eq!(refusal["error"]["code"], -32601);
    }

    #[tokio::test]
    async fn the_reader_waits_while_running_turns_have_a_full_backlog() {
        let (rpc, _out) = peer();
        let (tx, mut rx) = mpsc::unbounded_channel();
        rpc.subscribe("t1", tx);
        rpc.set_active("t1", true);
        let line = r#"{"method":"item/agentMessage/delta","params":{"threadId":"t1","delta":"x"}}"#;
        for _ in 0..BACKLOG_LIMIT {
            rpc.dispatch(line);
        }
        let room = rpc.room();
        tokio::pin!(room);
        assert!(
            futures::poll!(room.as_mut()).is_pending(),
            "full: the reader waits"
        );
        let msg = rx.try_recv().unwrap();
        rpc.took(&msg);
        assert!(futures::poll!(room.as_mut()).is_ready(), "one taken: room again");
        // Between turns nothing is kept.
        rpc.set_active("t1", false);
        rpc.dispatch(line);
        assert_eq!(rx.len(), BACKLOG_LIMIT - 1);
    }

    #[tokio::test]
    async fn a_request_not_answered_in_time_has_the_server_declared_dead() {
        let (tx, _out) = mpsc::unbounded_channel();
        let rpc = Rpc::new(tx, Duration::from_millis(30), ServedSecrets::default());
        // The reader's part: stop the server, say why.
        let reader = async {
            let unanswered = rpc.wedged().await;
            rpc.close(&Gone {
                status: "signal: 9 (SIGKILL)".into(),
                stderr_tail: "last words".into(),
                unanswered: Some(unanswered),
            });
        };
        let (result, ()) = tokio::join!(rpc.request("turn/start", json!({})), reader);
        let Err(RpcFailure::Gone(gone)) = result else {
            panic!("{result:?}")
        };
        assert_eq!(gone.unanswered.as_deref(), Some("`turn/start` within 30ms"));
        assert_eq!(gone.stderr_tail, "last words");
    }

    #[tokio::test]
    async fn an_error_answer_reaches_the_caller_without_a_served_secret() {
        let (tx, mut out) = mpsc::unbounded_channel();
        let served = ServedSecrets::default();
        served.add(&acplb_core::secrets::KnownSecrets::new(["value-of-session-a"]));
        let rpc = Rpc::new(tx, Duration::from_secs(60), served);
        let answer = async {
            let sent: Value = serde_json::from_str(&out.recv().await.unwrap()).unwrap();
            rpc.dispatch(
                &json!({"id": sent["id"], "error": {"code": 1, "message": "bad env value-of-session-a"}})
                    .to_string(),
            );
        };
        let (result, ()) = tokio::join!(rpc.request("thread/start", json!({})), answer);
        assert_eq!(result.unwrap_err().to_string(), "bad env [REDACTED] (code 1)");
    }

    #[tokio::test]
    async fn when_the_server_goes_every_waiter_and_session_hears_why() {
        let (rpc, _out) = peer();
        let (tx, mut rx) = mpsc::unbounded_channel();
        rpc.subscribe("t1", tx);
        rpc.set_active("t1", true);
        let waiting = rpc.request("turn/start", json!({}));
        let gone = Gone {
            status: "exit status: 3".into(),
            stderr_tail: "boom".into(),
            unanswered: None,
        };
        let close = async { rpc.close(&gone) };
        let (result, ()) = tokio::join!(waiting, close);
        assert_eq!(result.unwrap_err(), RpcFailure::Gone(gone.clone()));
        assert!(matches!(rx.try_recv().unwrap(), Incoming::Gone(g) if g == gone));
        assert!(matches!(
            rpc.request("x", json!({})).await,
            Err(RpcFailure::Gone(_))
        ));
    }
}
