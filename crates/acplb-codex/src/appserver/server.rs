//! The one `codex app-server` child an acplb shares between its sessions: started in the
//! background with the first session, restarted on demand (never in a loop) after it died,
//! stopped with its whole process tree on shutdown.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use acplb_core::error::ProviderError;
use acplb_core::provider::{ProviderSession, SessionSetup};
use acplb_core::transport::{Process, ProcessEvent, ProcessSpec, StdinMode};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::rpc::{Gone, Rpc, RpcFailure};
use super::session::AppSession;
use crate::exec::{CodexOptions, child_env};
use crate::transcript::Transcript;

/// The transcript of one app-server process, shared by its reader and `connect`.
type ProcessTranscript = Rc<RefCell<Transcript>>;

/// How long Codex may take to answer `initialize`.
const INITIALIZE_LIMIT: Duration = Duration::from_secs(30);
/// How long the server has to answer a health check.
const HEALTH_LIMIT: Duration = Duration::from_secs(10);

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

#[derive(Debug)]
struct Running {
    conn: Conn,
    /// `initialize` was answered: the server takes requests.
    ready: bool,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
struct Inner {
    options: CodexOptions,
    running: RefCell<Option<Running>>,
    starting: tokio::sync::Mutex<()>,
    generation: Cell<u64>,
    stopped: Cell<bool>,
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
                options,
                running: RefCell::new(None),
                starting: tokio::sync::Mutex::new(()),
                generation: Cell::new(0),
                stopped: Cell::new(false),
            }),
        }
    }

    pub(crate) fn options(&self) -> &CodexOptions {
        &self.inner.options
    }

    /// A session on this server; the server (if it is not running) and the session's thread
    /// start in the background, so `session/new` is answered at once.
    pub(crate) fn open_session(&self, setup: SessionSetup) -> Box<dyn ProviderSession> {
        // The session starts the server (if need be) and its thread in the background.
        Box::new(AppSession::new(self.clone(), setup))
    }

    /// The running server, if it is alive.
    pub(crate) fn live(&self) -> Option<Conn> {
        self.inner
            .running
            .borrow()
            .as_ref()
            .filter(|r| r.ready && r.conn.rpc.gone().is_none())
            .map(|r| r.conn.clone())
    }

    /// Whether the running server (if one was started) is alive and answers a cheap request
    /// (`thread/loaded/list`) within [`HEALTH_LIMIT`]. A server not started yet is healthy: it
    /// starts on demand.
    pub(crate) async fn health(&self) -> Result<(), String> {
        let conn = {
            let running = self.inner.running.borrow();
            match running.as_ref() {
                None => return Ok(()),
                Some(r) if !r.ready => return Ok(()),
                Some(r) => {
                    if let Some(gone) = r.conn.rpc.gone() {
                        return Err(format!("codex app-server is gone: {}", self.gone_error(&gone)));
                    }
                    r.conn.clone()
                }
            }
        };
        match tokio::time::timeout(HEALTH_LIMIT, conn.rpc.request("thread/loaded/list", json!({}))).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(failure)) => match failure {
                RpcFailure::Gone(gone) => {
                    Err(format!("codex app-server is gone: {}", self.gone_error(&gone)))
                }
                // An error answer is still an answer: the server is alive.
                RpcFailure::Error { .. } => Ok(()),
            },
            Err(_) => Err(format!(
                "codex app-server did not answer a health check within {} s",
                HEALTH_LIMIT.as_secs()
            )),
        }
    }

    /// The running server, started (or started anew after it died) if need be.
    pub(crate) async fn connect(&self) -> Result<Conn, ProviderError> {
        if let Some(conn) = self.live() {
            return Ok(conn);
        }
        // One start at a time; whoever waited here finds the server the first one started.
        let _starting = self.inner.starting.lock().await;
        if let Some(conn) = self.live() {
            return Ok(conn);
        }
        if self.inner.stopped.get() {
            return Err(ProviderError::Prepare("acplb is stopping".into()));
        }
        let generation = self.inner.generation.get() + 1;
        self.inner.generation.set(generation);
        let (conn, stop, task, transcript) = self.start(generation)?;
        *self.inner.running.borrow_mut() = Some(Running {
            conn: conn.clone(),
            ready: false,
            stop: Some(stop),
            task,
        });
        let init = json!({
            "clientInfo": { "name": "acplb", "title": "acplb", "version": env!("CARGO_PKG_VERSION") },
            "capabilities": { "experimentalApi": false },
        });
        transcript
            .borrow_mut()
            .message(true, &json!({ "method": "initialize", "params": init }));
        match tokio::time::timeout(INITIALIZE_LIMIT, conn.rpc.request("initialize", init)).await {
            Ok(Ok(result)) => transcript
                .borrow_mut()
                .message(false, &json!({ "method": "initialize", "result": result })),
            Ok(Err(failure)) => {
                self.stop_current().await;
                return Err(self.failed(&failure));
            }
            Err(_) => {
                self.stop_current().await;
                return Err(ProviderError::Prepare(format!(
                    "`{} app-server` did not answer `initialize` within {} s",
                    self.inner.options.program.display(),
                    INITIALIZE_LIMIT.as_secs()
                )));
            }
        }
        conn.rpc.notify("initialized", None);
        {
            let mut transcript = transcript.borrow_mut();
            transcript.message(true, &json!({ "method": "initialized" }));
            transcript.end();
        }
        if let Some(running) = self.inner.running.borrow_mut().as_mut() {
            running.ready = true;
        }
        tracing::info!(generation, "codex app-server ready");
        Ok(conn)
    }

    /// The error a failed request means for the turn waiting on it.
    pub(crate) fn failed(&self, failure: &RpcFailure) -> ProviderError {
        match failure {
            RpcFailure::Gone(gone) => self.gone_error(gone),
            RpcFailure::Error { .. } => ProviderError::TurnFailed {
                message: format!("codex app-server refused a request: {failure}"),
            },
        }
    }

    /// The error for a turn whose server died under it.
    pub(crate) fn gone_error(&self, gone: &Gone) -> ProviderError {
        let mut stderr_tail = gone.stderr_tail.clone();
        if stderr_tail.contains("unrecognized subcommand") && stderr_tail.contains("app-server") {
            // An old Codex: say what to do about it where the editor shows it.
            stderr_tail.push_str(
                "\nthis Codex has no `app-server`; update it, or run acplb with `--transport exec`",
            );
        }
        ProviderError::Exited {
            program: self.inner.options.program.clone(),
            status: gone.status.clone(),
            stderr_tail,
        }
    }

    #[allow(
        clippy::type_complexity,
        reason = "the four parts of a started server, used once"
    )]
    fn start(
        &self,
        generation: u64,
    ) -> Result<(Conn, oneshot::Sender<()>, JoinHandle<()>, ProcessTranscript), ProviderError> {
        let options = &self.inner.options;
        let mut args: Vec<std::ffi::OsString> = vec!["app-server".into()];
        for o in &options.overrides {
            args.push("-c".into());
            args.push(o.into());
        }
        // Plans reach the editor only when Codex's plan tool is on; it is off by default.
        args.push("-c".into());
        args.push("tools.update_plan.enabled=true".into());
        let cwd = std::env::current_dir()
            .ok()
            .filter(|d| d.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        tracing::debug!(?args, generation, "starting codex app-server");
        let transcript = Rc::new(RefCell::new(Transcript::open_process(
            options.transcript_dir.as_deref(),
            generation,
            &args,
        )));
        let mut process = Process::spawn(ProcessSpec {
            program: options.program.clone(),
            args,
            cwd,
            env: child_env(Vec::new()),
            env_remove: vec!["RUST_LOG".into()],
            stdin: StdinMode::Pipe,
            max_line_bytes: options.max_line_bytes,
            stderr_tail_bytes: 8 * 1024,
        })?;
        let stdin = process
            .take_stdin()
            .ok_or_else(|| ProviderError::Prepare("codex app-server has no stdin".into()))?;
        let marker: Rc<str> = Rc::from(process.marker());
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let rpc = Rpc::new(out_tx);
        tokio::task::spawn_local(write_lines(stdin, out_rx));
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::task::spawn_local(read_loop(
            process,
            rpc.clone(),
            stop_rx,
            options.output_flow.clone(),
            options.interrupt_grace,
            Rc::clone(&transcript),
        ));
        Ok((
            Conn {
                rpc,
                generation,
                marker,
            },
            stop_tx,
            task,
            transcript,
        ))
    }

    async fn stop_current(&self) {
        let running = self.inner.running.borrow_mut().take();
        if let Some(mut running) = running {
            if let Some(stop) = running.stop.take() {
                let _ignored = stop.send(());
            }
            if tokio::time::timeout(Duration::from_secs(3), &mut running.task)
                .await
                .is_err()
            {
                running.task.abort();
            }
        }
    }

    /// Stops the server and everything it started; later connects fail.
    pub(crate) async fn shutdown(&self) {
        self.inner.stopped.set(true);
        self.stop_current().await;
    }
}

/// Writes lines to the server's stdin until the peer is dropped or the pipe breaks.
async fn write_lines(mut stdin: tokio::process::ChildStdin, mut rx: mpsc::UnboundedReceiver<String>) {
    while let Some(mut line) = rx.recv().await {
        line.push('\n');
        if let Err(e) = stdin.write_all(line.as_bytes()).await {
            tracing::debug!(error = %e, "codex app-server's stdin closed");
            return;
        }
    }
}

/// Reads the server's output into the peer until it exits or is told to stop. While the
/// editor is behind (`flow`) or running turns have not taken what was read for them
/// (`Rpc::room`), the server's stdout is not read, so Codex waits on its pipe.
async fn read_loop(
    mut process: Process,
    rpc: Rc<Rpc>,
    mut stop: oneshot::Receiver<()>,
    flow: acplb_core::transport::OutputFlow,
    grace: Duration,
    transcript: ProcessTranscript,
) {
    let status = loop {
        let event = tokio::select! {
            biased;
            _ = &mut stop => {
                let status = process.stop(grace).await;
                transcript.borrow_mut().stopped(status);
                rpc.close(&Gone {
                    status: status.map_or_else(|| "stopped".into(), |s| s.to_string()),
                    stderr_tail: String::new(),
                });
                return;
            }
            // Cancel-safe: waiting for the editor or for running turns to catch up holds no
            // state; next_event is cancel-safe.
            event = async {
                flow.ready().await;
                rpc.room().await;
                process.next_event().await
            } => event,
        };
        match event {
            ProcessEvent::Stdout(line) => rpc.dispatch(&line),
            ProcessEvent::StdoutOversized { bytes } => {
                tracing::warn!(bytes, "dropped an over-long line from codex app-server");
            }
            ProcessEvent::Stderr(line) => {
                if tracing::enabled!(target: "acplb::codex::stderr", tracing::Level::DEBUG) {
                    // Shared by every session: the secret patterns, not one session's values.
                    let line = acplb_core::redact::redact(&line);
                    tracing::debug!(target: "acplb::codex::stderr", "{line}");
                }
                transcript.borrow_mut().stderr(&line);
            }
            ProcessEvent::Exited(status) => break status,
        }
    };
    transcript.borrow_mut().exit(status);
    // What it started must not outlive it.
    process.kill_descendants().await;
    tracing::warn!(%status, "codex app-server exited");
    rpc.close(&Gone {
        status: status.to_string(),
        stderr_tail: process.stderr_tail(),
    });
}
