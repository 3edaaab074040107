//! The stand-in as `codex app-server`: it claims the next recorded app-server process, answers
//! acplb's JSON-RPC from the recording and sends what Codex sent, in the recorded order, then
//! ends as the process did (stopped by acplb, or dead mid-turn).
//!
//! Each process plays as streams: its own (`initialize`) and one per session (that session's
//! turns on this process, in order). A message from acplb is routed to its stream when it
//! arrives ([`wire::Router`]: by thread id, by the id of the server request it answers, else to
//! the first stream still expecting that method), and the stream takes it when it reaches the
//! recorded message. Ids are remapped: a recorded result goes out under the id acplb gave its
//! request; Codex's own requests keep their recorded ids.
//!
//! Determinism at `--speed max`: a stream writes everything recorded up to the next message
//! acplb sent in the recording, then waits for that message. So Codex's side of every exchange
//! (an interrupt, a steer, an answer to an approval) happens after acplb's, as it did, and
//! acplb reads the same messages in the same order; what it does with them depends only on it.

mod stream;
mod wire;

use std::cell::{Cell, RefCell};
use std::collections::{HashSet, VecDeque};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
use tokio::sync::{Notify, mpsc, oneshot};

use super::{Exit, LIFETIME, Seen, Speed, State, note};
use crate::error::PlaybackError;
use crate::output::session_stream;
use crate::scenario::{AppServerRun, End};
use stream::{Stream, StreamEnd};
use wire::Router;

/// A line for the writer task.
#[derive(Debug)]
enum Line {
    Out(String),
    Err(String),
    Flushed(oneshot::Sender<()>),
}

/// Messages from acplb one stream has not taken yet: `(transcript form, acplb's request id)`.
type Inbox = VecDeque<(Value, Option<Value>)>;

/// What the streams share (one thread, no borrow held across an await).
#[derive(Debug)]
pub(super) struct Shared {
    dir: PathBuf,
    cwd: PathBuf,
    speed: Speed,
    router: RefCell<Router>,
    /// Per stream: messages from acplb not taken yet, `(transcript form, acplb's request id)`.
    inboxes: RefCell<Vec<Inbox>>,
    /// The stream order of each stream (for the log).
    orders: Vec<usize>,
    /// Per stream: what it waits for, for notes when acplb stops it.
    waiting: RefCell<Vec<Option<String>>>,
    arrived: Notify,
    eof: Cell<bool>,
    out: mpsc::UnboundedSender<Line>,
    log: RefCell<Option<std::fs::File>>,
}

impl Shared {
    fn note(&self, message: &str) {
        note(&self.dir, message);
    }

    fn stdout(&self, msg: &Value) {
        let _closed = self.out.send(Line::Out(msg.to_string()));
    }

    fn stderr(&self, line: &str) {
        let _closed = self.out.send(Line::Err(line.to_owned()));
    }

    /// Makes a recorded file change in the workspace (`None`: deletes the file).
    fn write_file(&self, path: &str, text: Option<&str>) {
        let file = self.cwd.join(path);
        let result = match text {
            Some(text) => file
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&file, text)),
            None => std::fs::remove_file(&file),
        };
        if let Err(e) = result {
            self.note(&format!("cannot change `{}` as recorded: {e}", file.display()));
        }
    }

    /// One line from acplb: routed to its stream, logged for the output.
    fn arrive(&self, line: &str) {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            self.note(&format!("acplb sent a line that is not JSON: {line}"));
            return;
        };
        let form = wire::transcript_form(&msg);
        let stream = self.router.borrow_mut().route(&form);
        if let Some(log) = self.log.borrow_mut().as_mut() {
            let order = self.orders.get(stream).copied().unwrap_or(0);
            let _ignored = writeln!(log, "{}", json!({ "stream": order, "msg": form }));
        }
        let id = msg.get("method").and(msg.get("id")).cloned();
        if let Some(inbox) = self.inboxes.borrow_mut().get_mut(stream) {
            inbox.push_back((form, id));
        }
        self.arrived.notify_waiters();
    }

    /// Waits for acplb's message that `want` records; refuses requests no later recorded
    /// message of the stream can be (`methods`). `None` when acplb closed the pipe first.
    async fn take(
        &self,
        index: usize,
        want: &Value,
        methods: &HashSet<String>,
        at: &str,
    ) -> Option<(Value, Option<Value>)> {
        loop {
            let notified = self.arrived.notified();
            let strays = {
                let mut inboxes = self.inboxes.borrow_mut();
                let inbox = inboxes.get_mut(index)?;
                if let Some(pos) = inbox.iter().position(|(form, _)| wire::matches(want, form)) {
                    return inbox.remove(pos);
                }
                let (strays, keep): (Inbox, Inbox) = inbox.drain(..).partition(|(form, id)| {
                    id.is_some()
                        && form
                            .get("method")
                            .and_then(Value::as_str)
                            .is_some_and(|m| !methods.contains(m))
                });
                *inbox = keep;
                strays
            };
            for (form, id) in strays {
                let method = form.get("method").and_then(Value::as_str).unwrap_or_default();
                self.note(&format!(
                    "{at}: acplb sent `{method}`, which the recording does not have here (it waited for {}); refused",
                    stream::describe(want)
                ));
                let message = format!("playback: the recording has no `{method}` here");
                self.stdout(&json!({ "id": id, "error": { "code": -32603, "message": message } }));
            }
            if self.eof.get() {
                return None;
            }
            self.set_waiting(index, Some(format!("{at}: {}", stream::describe(want))));
            notified.await;
            self.set_waiting(index, None);
        }
    }

    fn set_waiting(&self, index: usize, what: Option<String>) {
        if let Some(slot) = self.waiting.borrow_mut().get_mut(index) {
            *slot = what;
        }
    }

    async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.out.send(Line::Flushed(tx)).is_ok() {
            let _gone = rx.await;
        }
    }
}

/// Runs the stand-in for app-server process number `n` (already claimed).
pub(super) fn run(dir: &Path, state: &State, argv: Vec<String>, n: usize) -> Result<Exit, PlaybackError> {
    let seen = Seen { argv, stdin_bytes: 0 };
    super::write_seen(dir, &format!("app-server-{n}.json"), &seen)?;
    let Some(server) = state.app_servers.get(n - 1) else {
        let message = format!(
            "{}: acplb started app-server process {n} but the scenario records only {}",
            state.scenario.display(),
            state.app_servers.len()
        );
        note(dir, &message);
        return Err(PlaybackError::Session(message));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PlaybackError::process("starting the stand-in's runtime"))?;
    let local = tokio::task::LocalSet::new();
    let exit = local.block_on(&runtime, serve(dir, state, server, n));
    drop(local);
    // The stdin reader may sit in a blocking read of a pipe acplb keeps open: do not wait for it.
    runtime.shutdown_background();
    exit
}

/// The streams of a process: its own, then one per session in session order.
fn streams(server: &AppServerRun, n: usize) -> Vec<Stream> {
    let mut streams = vec![Stream {
        order: 0,
        label: format!("app-server {n}"),
        events: server.events.iter().map(|e| (0, e.clone())).collect(),
    }];
    for turn in &server.turns {
        let order = session_stream(&turn.session);
        let label = format!("app-server {n}, {}", turn.session);
        let events = turn.events.iter().map(|e| (turn.turn, e.clone()));
        match streams.iter_mut().find(|s| s.label == label) {
            Some(s) => s.events.extend(events),
            None => streams.push(Stream {
                order,
                label,
                events: events.collect(),
            }),
        }
    }
    streams
}

async fn serve(dir: &Path, state: &State, server: &AppServerRun, n: usize) -> Result<Exit, PlaybackError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(PlaybackError::process("listening for SIGINT"))?;
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(PlaybackError::process("listening for SIGTERM"))?;
    let streams = streams(server, n);
    let (sent, recv): (Vec<_>, Vec<_>) = streams.iter().map(Stream::messages).unzip();
    let log_path = dir.join("seen").join(format!("app-server-{n}.jsonl"));
    let log = std::fs::File::create(&log_path).map_err(PlaybackError::io(&log_path))?;
    let (out, lines) = mpsc::unbounded_channel();
    tokio::task::spawn_local(write_lines(lines));
    let shared = std::rc::Rc::new(Shared {
        dir: dir.to_path_buf(),
        cwd: state.cwd.clone(),
        speed: state.speed,
        router: RefCell::new(Router::new(&sent, &recv)),
        inboxes: RefCell::new(vec![VecDeque::new(); streams.len()]),
        orders: streams.iter().map(|s| s.order).collect(),
        waiting: RefCell::new(vec![None; streams.len()]),
        arrived: Notify::new(),
        eof: Cell::new(false),
        out,
        log: RefCell::new(Some(log)),
    });
    tokio::task::spawn_local(read_stdin(std::rc::Rc::clone(&shared)));
    let players = futures_join(&shared, &streams);
    let stopped = |shared: &Shared, how: &str| {
        for what in shared.waiting.borrow().iter().flatten() {
            shared.note(&format!("{what}: acplb {how} while playback waited for this"));
        }
    };
    let ends = tokio::select! {
        ends = players => ends,
        _ = sigint.recv() => { stopped(&shared, "stopped app-server (SIGINT)"); return Ok(Exit::Code(1)); }
        _ = sigterm.recv() => { stopped(&shared, "stopped app-server (SIGTERM)"); return Ok(Exit::Code(143)); }
        () = tokio::time::sleep(LIFETIME) => return Err(PlaybackError::Session(format!(
            "the app-server stand-in gave up after {LIFETIME:?} (acplb never stopped it)"
        ))),
    };
    shared.flush().await;
    let died = ends.contains(&StreamEnd::Gone);
    match server.end {
        End::Exit(code) => return Ok(Exit::Code(code)),
        End::Signal(signal) => return Ok(Exit::Signal(signal)),
        End::Cancelled if died => return Ok(Exit::Code(1)),
        End::Cancelled => {}
    }
    // acplb stopped this process: wait for that.
    loop {
        let notified = shared.arrived.notified();
        if shared.eof.get() {
            return Ok(Exit::Code(0));
        }
        tokio::select! {
            () = notified => {}
            _ = sigint.recv() => return Ok(Exit::Code(1)),
            _ = sigterm.recv() => return Ok(Exit::Code(143)),
            () = tokio::time::sleep(LIFETIME) => return Ok(Exit::Code(0)),
        }
    }
}

/// Plays every stream at once; their ends in stream order.
async fn futures_join(shared: &Shared, streams: &[Stream]) -> Vec<StreamEnd> {
    let players = streams
        .iter()
        .enumerate()
        .map(|(i, s)| stream::play(shared, i, s));
    futures::future::join_all(players).await
}

async fn read_stdin(shared: std::rc::Rc<Shared>) {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    // Cancel-safety is moot: this task reads until the pipe ends.
    while let Ok(Some(line)) = lines.next_line().await {
        if !line.trim().is_empty() {
            shared.arrive(&line);
        }
    }
    shared.eof.set(true);
    shared.arrived.notify_waiters();
}

async fn write_lines(mut lines: mpsc::UnboundedReceiver<Line>) {
    let (mut out, mut err) = (tokio::io::stdout(), tokio::io::stderr());
    while let Some(line) = lines.recv().await {
        let result = match line {
            Line::Out(text) => write_line(&mut out, &text).await,
            Line::Err(text) => write_line(&mut err, &text).await,
            Line::Flushed(done) => {
                let _gone = done.send(());
                Ok(())
            }
        };
        if result.is_err() {
            // acplb is gone; nothing more can be said to it.
            return;
        }
    }
}

async fn write_line<W: tokio::io::AsyncWrite + Unpin>(w: &mut W, text: &str) -> std::io::Result<()> {
    w.write_all(format!("{text}\n").as_bytes()).await?;
    w.flush().await
}
