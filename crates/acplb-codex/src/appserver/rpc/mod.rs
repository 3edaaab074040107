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
use super::protocol::Request;
use super::served::ServedSecrets;
pub(crate) use logins::LoginEnd;
pub(crate) use route::Inbox;
use route::Route;
pub(crate) use stops::Stops;

mod children;
mod logins;
mod route;
mod stops;

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

/// Our side of the connection. Lines go out through `out` (a writer task owns the pipe);
/// [`Rpc::dispatch`] is fed every line the server sends.
#[derive(Debug)]
pub(crate) struct Rpc {
    out: mpsc::UnboundedSender<String>,
    next_id: Cell<i64>,
    pending: RefCell<HashMap<i64, Pending>>,
    threads: RefCell<HashMap<String, Route>>,
    /// Subagent threads, routed as the session thread they belong to.
    children: RefCell<children::Children>,
    /// Messages routed to a running turn and not yet taken from its [`Inbox`].
    backlog: Cell<usize>,
    /// Wakes the reader when the backlog falls below its limit.
    room: tokio::sync::Notify,
    gone: RefCell<Option<Gone>>,
    /// The last `account/rateLimits/updated` params (they name no thread), for `/status`.
    rate_limits: RefCell<Option<Value>>,
    /// Sign-ins that ended (`account/login/completed`, naming no thread).
    logins: logins::Logins,
    /// How many `skills/changed` the server sent (naming no thread); sessions watch it.
    skills_changed: tokio::sync::watch::Sender<u64>,
    /// Ticked on `account/updated` and `account/login/completed` (the sign-in may have
    /// changed), when somebody watches ([`Rpc::report_account_changes`]).
    account_changed: RefCell<Option<tokio::sync::watch::Sender<u64>>>,
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
    /// Background commands being stopped, until their end arrives.
    stops: Rc<Stops>,
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
            children: RefCell::default(),
            backlog: Cell::new(0),
            room: tokio::sync::Notify::new(),
            gone: RefCell::new(None),
            rate_limits: RefCell::new(None),
            logins: logins::Logins::default(),
            skills_changed: tokio::sync::watch::Sender::new(0),
            account_changed: RefCell::new(None),
            limit,
            wedged: RefCell::new(None),
            wedge: tokio::sync::Notify::new(),
            heard: Cell::new(Instant::now()),
            clock: ReadClock::default(),
            secrets,
            stops: Rc::default(),
        })
    }

    /// The background commands being stopped on this server.
    pub(crate) fn stops(&self) -> Rc<Stops> {
        self.stops.clone()
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

    /// Whether the server is gone or about to be (declared dead, being stopped).
    pub(crate) fn is_dead(&self) -> bool {
        self.gone.borrow().is_some() || self.wedged.borrow().is_some()
    }

    /// The account's rate limits as last reported.
    pub(crate) fn rate_limits(&self) -> Option<Value> {
        self.rate_limits.borrow().clone()
    }

    /// Changes each time the server says a skill file changed.
    /// Ticks `to` whenever the server says the sign-in may have changed.
    pub(crate) fn report_account_changes(&self, to: tokio::sync::watch::Sender<u64>) {
        *self.account_changed.borrow_mut() = Some(to);
    }

    pub(crate) fn skills_changed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.skills_changed.subscribe()
    }

    /// Sends a request and waits for its result, within the request limit.
    pub(crate) async fn request<R: Request>(&self, params: &R) -> Result<Value, RpcFailure> {
        self.request_within(params, self.limit, &format!("`{}`", R::METHOD))
            .await
    }

    /// Sends a request and waits for its result. A server that does not answer within `limit`
    /// (time it was held back aside) is declared dead, and the request fails with the reason:
    /// it did not answer `what` (`` `initialize` ``, `a health check`) within `limit`.
    pub(crate) async fn request_within<R: Request>(
        &self,
        params: &R,
        limit: Duration,
        what: &str,
    ) -> Result<Value, RpcFailure> {
        let params = serde_json::to_value(params).map_err(|e| RpcFailure::Error {
            code: -32603,
            message: format!("acplb could not write its `{}` request: {e}", R::METHOD),
        })?;
        self.send_request(R::METHOD, params, limit, what).await
    }

    async fn send_request(
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
        let answer = if let Some(answer) = self.clock.within(limit, &mut rx).await {
            answer
        } else {
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
        };
        // The sender is dropped only when the connection is torn down.
        answer.unwrap_or_else(|_| Err(RpcFailure::Gone(self.gone().unwrap_or_else(Gone::closed))))
    }

    /// Sends a notification without params (`initialized`).
    pub(crate) fn notify(&self, method: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method }));
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

    /// The server is gone: every waiting request fails and every session hears it.
    pub(crate) fn close(&self, gone: &Gone) {
        *self.gone.borrow_mut() = Some(gone.clone());
        for (_, tx) in self.pending.borrow_mut().drain() {
            let _ignored = tx.send(Err(RpcFailure::Gone(gone.clone())));
        }
        for (_, route) in self.threads.borrow_mut().drain() {
            let _ignored = route.tx.send(Incoming::Gone(gone.clone()));
            // Between turns the session's follower hears it too (ADR 0058).
            route.tell_idle(Incoming::Gone(gone.clone()));
        }
        self.room.notify_waiters();
        self.logins.closed();
    }
}

#[cfg(test)]
mod tests;
