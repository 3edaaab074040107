//! The one `codex app-server` child an acplb shares between its sessions: started in the
//! background with the first session, restarted on demand (never in a loop) after it died or
//! stopped answering, stopped with its whole process tree on shutdown. A start is one attempt
//! (spawn, then `initialize` within its limit) shared by everyone who needs the server while it
//! runs. A server whose Codex binary changed on disk (an upgrade) is replaced at the next
//! connect that finds it idle; sessions resume their threads on the new one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use acplb_core::error::ProviderError;
use acplb_core::secrets::KnownSecrets;
use futures::FutureExt as _;
use futures::future::{LocalBoxFuture, Shared};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::binary::{self, Stamp};
use super::liveness::Limits;
use super::protocol::Request as _;
use super::protocol::methods;
use super::protocol::requests::{Initialize, ThreadLoadedList};
use super::rpc::{Gone, Rpc, RpcFailure};
use super::served::ServedSecrets;
use crate::options::CodexOptions;
use crate::transcript::Transcript;

mod spawn;
mod upgrade;

use spawn::stop;

/// The transcript of one app-server process, shared by its reader and `connect`.
type ProcessTranscript = Rc<RefCell<Transcript>>;

/// A start in progress: the server spawned, `initialize` not answered yet.
type Attempt = Shared<LocalBoxFuture<'static, Result<Conn, RpcFailure>>>;

/// A live connection to one app-server process.
#[derive(Debug, Clone)]
pub(crate) struct Conn {
    pub(crate) rpc: Rc<Rpc>,
    /// Counts the processes started so far: a session whose thread was started on an older
    /// one resumes it on this one.
    pub(crate) generation: u64,
    /// The marker the server and everything it starts carry (for a per-thread sweep).
    pub(crate) marker: Rc<str>,
}

/// A server just spawned: its connection, how to stop it, its reader task, its transcript.
struct Started {
    conn: Conn,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
    transcript: ProcessTranscript,
}

#[derive(Debug)]
struct Running {
    conn: Conn,
    /// `initialize` was answered: the server takes requests.
    ready: bool,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
    /// The Codex binary it was started from, once read.
    stamp: Option<Stamp>,
}

struct Inner {
    options: CodexOptions,
    limits: Limits,
    /// The secrets of every session opened here, cut from whatever the server prints.
    served: ServedSecrets,
    running: RefCell<Option<Running>>,
    /// The start in progress, which everyone who needs the server meanwhile waits on.
    starting: RefCell<Option<Attempt>>,
    generation: Cell<u64>,
    stopped: Cell<bool>,
    /// Ticks when a server (this one or a later one) says the sign-in may have changed.
    account: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner")
            .field("running", &self.running)
            .field("starting", &self.starting.borrow().is_some())
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// The shared app-server (cheap to clone).
#[derive(Debug, Clone)]
pub struct AppServer {
    inner: Rc<Inner>,
}

impl AppServer {
    /// An app-server that is started when the first session opens.
    pub(crate) fn new(options: CodexOptions) -> Self {
        Self {
            inner: Rc::new(Inner {
                limits: Limits::new(options.request_limit),
                options,
                served: ServedSecrets::default(),
                running: RefCell::new(None),
                starting: RefCell::new(None),
                generation: Cell::new(0),
                stopped: Cell::new(false),
                account: tokio::sync::watch::Sender::new(0),
            }),
        }
    }

    pub(crate) fn options(&self) -> &CodexOptions {
        &self.inner.options
    }

    /// Ticks when the server says the sign-in may have changed (`account/updated`, the end of
    /// a sign-in), across restarts of the server.
    pub(crate) fn account_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.account.subscribe()
    }

    /// A session's secrets, from now on cut from everything the server prints.
    pub(crate) fn serve(&self, secrets: &KnownSecrets) {
        self.inner.served.add(secrets);
    }

    /// The running server, if it is alive.
    pub(crate) fn live(&self) -> Option<Conn> {
        self.inner
            .running
            .borrow()
            .as_ref()
            .filter(|r| r.ready && !r.conn.rpc.is_dead())
            .map(|r| r.conn.clone())
    }

    /// Whether the running server (if one was started) is alive and answers a cheap request
    /// (`thread/loaded/list`) within the health limit; one that does not is stopped. A server
    /// not started yet is healthy: it starts on demand.
    pub(crate) async fn health(&self) -> Result<(), String> {
        let conn = {
            let running = self.inner.running.borrow();
            match running.as_ref() {
                None => return Ok(()),
                Some(r) if !r.ready => return Ok(()),
                Some(r) => r.conn.clone(),
            }
        };
        let limit = self.inner.limits.health;
        match conn
            .rpc
            .request_within(&ThreadLoadedList {}, limit, "a health check")
            .await
        {
            // An error answer is still an answer: the server is alive.
            Ok(_) | Err(RpcFailure::Error { .. }) => Ok(()),
            Err(RpcFailure::Gone(gone)) => Err(match gone.unanswered {
                Some(_) => self.gone_error(&gone).to_string(),
                None => format!("codex app-server is gone: {}", self.gone_error(&gone)),
            }),
        }
    }

    /// The running server, started (or started anew after it died) if need be. Whoever needs
    /// it while a start is under way waits on that start: one attempt, bounded by the
    /// `initialize` limit, and its outcome for all of them.
    /// [`Self::connect`] for a caller that reports in words: why the server is not there.
    pub(crate) async fn connect_or_say(&self) -> Result<Conn, String> {
        self.connect()
            .await
            .map_err(|e| format!("codex app-server did not start: {e}"))
    }

    pub(crate) async fn connect(&self) -> Result<Conn, ProviderError> {
        if let Some(conn) = self.live()
            && !self.replaced_if_outdated(&conn).await
        {
            return Ok(conn);
        }
        let under_way = self.inner.starting.borrow().clone();
        let attempt = match under_way {
            Some(attempt) => attempt,
            None => self.begin()?,
        };
        attempt.await.map_err(|failure| self.failed(&failure))
    }

    /// Spawns a new server and starts its `initialize` in the background, as the attempt
    /// everyone waits on until it is answered (or not).
    fn begin(&self) -> Result<Attempt, ProviderError> {
        if self.inner.stopped.get() {
            return Err(ProviderError::Prepare("acplb is stopping".into()));
        }
        let generation = self.inner.generation.get() + 1;
        self.inner.generation.set(generation);
        let Started {
            conn,
            stop,
            task,
            transcript,
        } = self.start(generation)?;
        *self.inner.running.borrow_mut() = Some(Running {
            conn: conn.clone(),
            ready: false,
            stop: Some(stop),
            task,
            stamp: None,
        });
        let server = self.clone();
        // A task of its own: a waiter that gives up (a cancelled prompt) does not stop it.
        let handle = tokio::task::spawn_local(async move {
            let stamp = binary::stamp(&server.inner.options.program).await;
            if let Some(running) = server.inner.running.borrow_mut().as_mut()
                && running.conn.generation == generation
            {
                running.stamp = stamp;
            }
            let result = server.initialize(conn, &transcript).await;
            server.inner.starting.borrow_mut().take();
            result
        });
        let attempt = async move {
            handle.await.unwrap_or_else(|e| {
                Err(RpcFailure::Gone(Gone {
                    status: format!("starting it failed: {e}"),
                    stderr_tail: String::new(),
                    unanswered: None,
                }))
            })
        }
        .boxed_local()
        .shared();
        *self.inner.starting.borrow_mut() = Some(attempt.clone());
        Ok(attempt)
    }

    /// The `initialize` handshake of a new server; a server that fails it is stopped.
    async fn initialize(&self, conn: Conn, transcript: &ProcessTranscript) -> Result<Conn, RpcFailure> {
        let init = Initialize::acplb();
        transcript
            .borrow_mut()
            .record(true, || json!({ "method": Initialize::METHOD, "params": init }));
        let limit = self.inner.limits.initialize;
        let version = match conn.rpc.request_within(&init, limit, "`initialize`").await {
            Ok(result) => {
                let version = result
                    .get("userAgent")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned);
                transcript.borrow_mut().record(
                    false,
                    || json!({ "method": Initialize::METHOD, "result": result }),
                );
                version
            }
            Err(failure) => {
                self.stop_current().await;
                return Err(failure);
            }
        };
        conn.rpc.notify(methods::INITIALIZED);
        {
            let mut transcript = transcript.borrow_mut();
            transcript.record(true, || json!({ "method": methods::INITIALIZED }));
            transcript.end();
        }
        if let Some(running) = self.inner.running.borrow_mut().as_mut() {
            running.ready = true;
        }
        tracing::info!(
            generation = conn.generation,
            version = version.as_deref().unwrap_or("unknown"),
            "codex app-server ready"
        );
        Ok(conn)
    }

    /// The error a failed request means for the turn waiting on it.
    pub(crate) fn failed(&self, failure: &RpcFailure) -> ProviderError {
        match failure {
            RpcFailure::Gone(gone) => self.gone_error(gone),
            RpcFailure::Error { .. } => {
                ProviderError::turn_failed(format!("codex app-server refused a request: {failure}"))
            }
        }
    }

    /// The error for a turn whose server died under it, or was stopped for not answering (its
    /// stderr was redacted as it was read).
    pub(crate) fn gone_error(&self, gone: &Gone) -> ProviderError {
        let mut stderr_tail = gone.stderr_tail.clone();
        if stderr_tail.contains("unrecognized subcommand") && stderr_tail.contains("app-server") {
            // An old Codex: say what to do about it where the editor shows it.
            stderr_tail.push_str(
                "\nthis Codex has no `app-server`; update it, or run acplb with `--transport exec`",
            );
        }
        match &gone.unanswered {
            Some(unanswered) => ProviderError::Unresponsive {
                process: format!("{} app-server", self.inner.options.program.display()),
                unanswered: unanswered.clone(),
                stderr_tail,
            },
            None => ProviderError::Exited {
                program: self.inner.options.program.clone(),
                status: gone.status.clone(),
                stderr_tail,
            },
        }
    }

    async fn stop_current(&self) {
        let running = self.inner.running.borrow_mut().take();
        if let Some(running) = running {
            stop(running).await;
        }
    }

    /// Stops the server and everything it started; later connects fail.
    pub(crate) async fn shutdown(&self) {
        self.inner.stopped.set(true);
        self.stop_current().await;
    }
}
