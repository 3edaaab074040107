//! The server's lifecycle: bind 127.0.0.1, serve on a private thread and runtime, stop when the handle drops.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use super::MockError;
use super::http::{State, handle};
use super::log::{LoggedRequest, RequestLog};
use super::script::Script;
use super::sse::IdGen;

/// The default bound on a request body: 32 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How to run the mock model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MockConfig {
    /// The port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// The scenarios to play.
    pub script: Script,
    /// The pause between two SSE events (a step's `delay_ms` overrides it).
    pub delay: Duration,
    /// A file to which every request is appended as a JSON line.
    pub log_file: Option<PathBuf>,
    /// Larger request bodies are answered with 413.
    pub max_body_bytes: usize,
}

impl Default for MockConfig {
    /// An ephemeral port, the built-in script, no delay, no log file, 32 MiB bodies.
    fn default() -> Self {
        MockConfig {
            port: 0,
            script: Script::builtin(),
            delay: Duration::ZERO,
            log_file: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl MockConfig {
    /// Sets the port.
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Sets the script.
    #[must_use]
    pub fn with_script(mut self, script: Script) -> Self {
        self.script = script;
        self
    }

    /// Sets the pause between SSE events.
    #[must_use]
    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Sets the JSONL request log file.
    #[must_use]
    pub fn with_log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    /// Sets the request body bound.
    #[must_use]
    pub fn with_max_body_bytes(mut self, max: usize) -> Self {
        self.max_body_bytes = max;
        self
    }
}

/// The mock `OpenAI` Responses API server.
#[derive(Debug)]
pub struct MockModel;

impl MockModel {
    /// Binds `127.0.0.1:<port>` and serves on a background thread with its own tokio runtime, so the
    /// caller may be on any runtime or none. The server stops when the handle is dropped.
    pub fn start(config: MockConfig) -> Result<MockModelHandle, MockError> {
        let requested = SocketAddr::from((Ipv4Addr::LOCALHOST, config.port));
        let bind_error = |source| MockError::Bind {
            addr: requested,
            source,
        };
        let listener = std::net::TcpListener::bind(requested).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let log = match &config.log_file {
            Some(path) => RequestLog::with_file(path)?,
            None => RequestLog::default(),
        };
        let state = Arc::new(State {
            script: config.script,
            delay: config.delay,
            max_body_bytes: config.max_body_bytes,
            ids: IdGen::default(),
            log: log.clone(),
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(format!("mock-model-{}", addr.port()))
            .spawn(move || serve_thread(listener, state, stop_rx, &ready_tx))
            .map_err(|source| MockError::Start { source })?;
        let handle = MockModelHandle {
            addr,
            log,
            stop: Some(stop_tx),
            thread: Some(thread),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(handle),
            Ok(Err(source)) => Err(MockError::Start { source }),
            Err(_) => Err(MockError::Start {
                source: io::Error::other("the server thread ended during start-up"),
            }),
        }
    }
}

/// A running mock model. Dropping it stops the server and waits for its thread.
#[derive(Debug)]
pub struct MockModelHandle {
    addr: SocketAddr,
    log: RequestLog,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MockModelHandle {
    /// The bound address (always on 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:<port>/v1`, the `base_url` of a Codex model provider.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.log.snapshot()
    }

    /// Stops the server now (the same as dropping the handle).
    pub fn shutdown(self) {}
}

impl Drop for MockModelHandle {
    fn drop(&mut self) {
        // Dropping the sender wakes the accept loop, which then returns and drops the runtime,
        // cancelling every open connection and stream.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the mock model server thread panicked");
        }
    }
}

fn serve_thread(
    listener: std::net::TcpListener,
    state: Arc<State>,
    stop: oneshot::Receiver<()>,
    ready: &std::sync::mpsc::Sender<io::Result<()>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            // If `start` is gone there is nobody to tell.
            drop(ready.send(Err(error)));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(error) => {
                drop(ready.send(Err(error)));
                return;
            }
        };
        drop(ready.send(Ok(())));
        accept_loop(listener, state, stop).await;
    });
}

async fn accept_loop(listener: TcpListener, state: Arc<State>, mut stop: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            // Cancellation-safe: a oneshot receiver can be polled again; it resolves when the handle drops.
            _ = &mut stop => return,
            // Cancellation-safe: `accept` loses no connection when the other branch wins.
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, Arc::clone(&state)));
                }
                Err(error) => {
                    tracing::debug!(%error, "mock model accept failed");
                    // Back off so a persistent error (e.g. out of file descriptors) cannot spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

async fn serve_connection(stream: TcpStream, state: Arc<State>) {
    let service = service_fn(move |request| handle(Arc::clone(&state), request));
    if let Err(error) = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await
    {
        tracing::debug!(%error, "mock model connection ended with an error");
    }
}
