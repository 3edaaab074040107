//! The stand-in for Codex: `playback` started as `codex` by acplb during a replay. It takes the
//! next recorded Codex run from the replay's state directory, prints its stdout and stderr lines
//! (with the recorded delays at `--speed real`), makes its file changes, and exits with the
//! recorded status; on SIGINT it exits 1 and on SIGTERM 143, as Codex 0.169.0 does.
//!
//! Started as `codex app-server` for a scenario recorded on that transport, it plays the
//! recorded JSON-RPC instead (`app`).
//!
//! Ordering across the two pipes: acplb reads stdout and stderr concurrently, so two lines
//! written back to back on different pipes may be read in either order. Before a line on the
//! other pipe (and before a file change) the stand-in therefore writes one line at
//! a time and waits until acplb has read each ([`pipe::FdPipe::wait_drained`]): a read of a
//! pipe holding exactly one line hands that line on at once, so the order is the recorded one.

mod app;
mod pipe;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::PlaybackError;
use crate::scenario::{AppServerRun, End, EventKind, ProviderRun, Transport};
pub use pipe::FdPipe;

/// The environment variable naming the replay's state directory.
pub const STATE_DIR_VAR: &str = "PLAYBACK_STANDIN_DIR";
/// The stand-in gives up after this long (acplb would have killed a real Codex by then).
const LIFETIME: Duration = Duration::from_secs(300);
/// How long Codex takes to exit after SIGINT (README §5: about 110 ms).
const SIGINT_EXIT_DELAY: Duration = Duration::from_millis(110);

/// How fast the stand-in plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// No delays, only the waits that keep the order.
    #[default]
    Max,
    /// The recorded delays.
    Real,
}

/// What `playback run` hands the stand-in (`state.json` in the state directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// The scenario file, for messages.
    pub scenario: PathBuf,
    /// The replay's workspace (file changes are made there).
    pub cwd: PathBuf,
    /// Playback speed.
    pub speed: Speed,
    /// The runs, placeholders already replaced (`exec`).
    pub runs: Vec<ProviderRun>,
    /// The transport the scenario was recorded on.
    #[serde(default)]
    pub transport: Transport,
    /// The app-server processes, placeholders already replaced (`app-server`).
    #[serde(default)]
    pub app_servers: Vec<AppServerRun>,
}

/// What the stand-in saw of its invocation (`seen/<n>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seen {
    /// Its arguments (without the program name).
    pub argv: Vec<String>,
    /// Bytes read from stdin (the prompt).
    pub stdin_bytes: usize,
}

/// How the stand-in process must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exit with this code.
    Code(i32),
    /// Die by this signal.
    Signal(i32),
}

/// Writes `state` into a fresh state directory.
pub fn write_state(dir: &Path, state: &State) -> Result<(), PlaybackError> {
    for sub in ["claims", "seen"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(PlaybackError::io(dir.join(sub)))?;
    }
    let path = dir.join("state.json");
    let text = serde_json::to_string(state).map_err(|e| PlaybackError::Session(e.to_string()))?;
    std::fs::write(&path, text).map_err(PlaybackError::io(path))
}

/// The runs the stand-in saw, in order (read by `playback run` after acplb exited).
pub fn read_seen(dir: &Path) -> Vec<Seen> {
    (1..)
        .map_while(|n| std::fs::read_to_string(dir.join("seen").join(format!("{n}.json"))).ok())
        .filter_map(|text| serde_json::from_str(&text).ok())
        .collect()
}

/// What an app-server stand-in saw: per process (in order), its arguments and every message
/// acplb sent it with its stream (`(stream, transcript-form JSON)`).
pub fn read_seen_app_servers(dir: &Path) -> Vec<(Seen, Vec<(usize, String)>)> {
    (1..)
        .map_while(|n| {
            let seen = std::fs::read_to_string(dir.join("seen").join(format!("app-server-{n}.json"))).ok()?;
            let seen: Seen = serde_json::from_str(&seen).ok()?;
            let log = std::fs::read_to_string(dir.join("seen").join(format!("app-server-{n}.jsonl")))
                .unwrap_or_default();
            let sent = log
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|v| {
                    let stream = v["stream"].as_u64().and_then(|s| usize::try_from(s).ok());
                    (stream.unwrap_or(0), v["msg"].to_string())
                })
                .collect();
            Some((seen, sent))
        })
        .collect()
}

/// Notes the stand-in left (problems with the scenario seen while playing).
pub fn read_notes(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("notes.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Appends a note for `playback run` (best effort: a note must never stop the replay).
fn note(dir: &Path, message: &str) {
    use std::io::Write as _;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("notes.log"));
    if let Ok(mut file) = file {
        let _ignored = writeln!(file, "{message}");
    }
}

/// Runs the stand-in: claims the next run, reads stdin, plays, and says how to exit.
pub fn run(dir: &Path, argv: Vec<String>) -> Result<Exit, PlaybackError> {
    let state_path = dir.join("state.json");
    let text = std::fs::read_to_string(&state_path).map_err(PlaybackError::io(&state_path))?;
    let state: State = serde_json::from_str(&text).map_err(|e| PlaybackError::Invalid {
        path: state_path.clone(),
        line: e.line(),
        message: e.to_string(),
    })?;
    if state.transport == Transport::AppServer {
        let n = claim(dir, "app-server-")?;
        return app::run(dir, &state, argv, n);
    }
    let n = claim(dir, "")?;
    let mut stdin = Vec::new();
    // Codex reads the whole prompt before it starts; so does the stand-in.
    std::io::stdin()
        .read_to_end(&mut stdin)
        .map_err(PlaybackError::process("reading the prompt from stdin"))?;
    let seen = Seen {
        argv,
        stdin_bytes: stdin.len(),
    };
    write_seen(dir, &format!("{n}.json"), &seen)?;
    let Some(run) = state.runs.get(n - 1) else {
        let message = format!(
            "{}: acplb started Codex run {n} but the scenario records only {}",
            state.scenario.display(),
            state.runs.len()
        );
        note(dir, &message);
        return Err(PlaybackError::Session(message));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PlaybackError::process("starting the stand-in's runtime"))?;
    runtime.block_on(play_until_signal(&state, run))
}

/// Claims the lowest run number nobody took yet (acplb starts one Codex at a time per session);
/// app-server processes count apart (`prefix`).
fn claim(dir: &Path, prefix: &str) -> Result<usize, PlaybackError> {
    for n in 1..100_000 {
        let path = dir.join("claims").join(format!("{prefix}{n}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(PlaybackError::io(path)(e)),
        }
    }
    Err(PlaybackError::Session("too many codex runs".to_owned()))
}

async fn play_until_signal(state: &State, run: &ProviderRun) -> Result<Exit, PlaybackError> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut sigint =
        signal(SignalKind::interrupt()).map_err(PlaybackError::process("listening for SIGINT"))?;
    let mut sigterm =
        signal(SignalKind::terminate()).map_err(PlaybackError::process("listening for SIGTERM"))?;
    let mut out = FdPipe::stdout();
    let mut err = FdPipe::stderr();
    tokio::select! {
        // Playing is cancel-safe enough: a signal ends the process, half-written lines included.
        result = play(state, run, &mut out, &mut err) => result,
        _ = sigint.recv() => {
            if state.speed == Speed::Real {
                tokio::time::sleep(SIGINT_EXIT_DELAY).await;
            }
            Ok(Exit::Code(1))
        }
        _ = sigterm.recv() => Ok(Exit::Code(143)),
        () = tokio::time::sleep(LIFETIME) => Err(PlaybackError::Session(format!(
            "the stand-in gave up after {LIFETIME:?} (acplb never stopped it)"
        ))),
    }
}

/// What to do for each event: whether each line must be read by acplb before the next one.
pub(crate) fn plan(run: &ProviderRun) -> Vec<bool> {
    // The pipe each event needs acplb to have read up to: 1 = stdout, 2 = stderr; a file
    // change counts as stderr, because it is preceded by a sync line there.
    let pipe = |kind: &EventKind| match kind {
        EventKind::Stdout(_) | EventKind::Sent(_) | EventKind::Recv(_) => 1,
        EventKind::Stderr(_) | EventKind::Write { .. } | EventKind::Delete { .. } => 2,
    };
    let mut wait = vec![false; run.events.len()];
    let mut later: [bool; 3] = [false; 3];
    for (i, event) in run.events.iter().enumerate().rev() {
        let p = pipe(&event.kind);
        let is_line = matches!(event.kind, EventKind::Stdout(_) | EventKind::Stderr(_));
        wait[i] = is_line && later[3 - p];
        later[p] = true;
    }
    wait
}

async fn play(
    state: &State,
    run: &ProviderRun,
    out: &mut FdPipe,
    err: &mut FdPipe,
) -> Result<Exit, PlaybackError> {
    let started = Instant::now();
    let waits = plan(run);
    let mut synced = false;
    for (event, wait) in run.events.iter().zip(waits) {
        if state.speed == Speed::Real {
            let at = started + Duration::from_millis(event.t_ms);
            tokio::time::sleep_until(at.into()).await;
        }
        let io = |e| PlaybackError::process("writing codex output")(e);
        match &event.kind {
            EventKind::Stdout(line) => {
                out.write_line(line).map_err(io)?;
                synced = false;
                if wait {
                    out.wait_drained().await.map_err(io)?;
                }
            }
            EventKind::Stderr(line) => {
                err.write_line(line).map_err(io)?;
                synced = false;
                if wait {
                    err.wait_drained().await.map_err(io)?;
                }
            }
            EventKind::Write { path, text } => {
                sync(err, &mut synced).await.map_err(io)?;
                let file = state.cwd.join(path);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(PlaybackError::io(parent))?;
                }
                std::fs::write(&file, text).map_err(PlaybackError::io(&file))?;
            }
            EventKind::Delete { path } => {
                sync(err, &mut synced).await.map_err(io)?;
                let file = state.cwd.join(path);
                std::fs::remove_file(&file).map_err(PlaybackError::io(&file))?;
            }
            // Not in a `codex exec` run (the loader refuses them there).
            EventKind::Sent(_) | EventKind::Recv(_) => {}
        }
    }
    out.flush()
        .map_err(PlaybackError::process("writing codex output"))?;
    match run.end {
        End::Exit(code) => Ok(Exit::Code(code)),
        End::Signal(signal) => Ok(Exit::Signal(signal)),
        End::Cancelled => std::future::pending().await,
    }
}

/// Makes sure acplb finished handling every line so far before a file changes: acplb handles
/// one line at a time and reads the next only when done (for a `file_change` line, done means
/// its git snapshot is taken), so once it has read an empty stderr line it is past them all.
async fn sync(err: &mut FdPipe, synced: &mut bool) -> std::io::Result<()> {
    if !*synced {
        err.write_line("")?;
        err.wait_drained().await?;
        *synced = true;
    }
    Ok(())
}

/// Keeps what acplb started a stand-in with (`seen/<name>`), for `playback run` to compare.
pub(super) fn write_seen(dir: &Path, name: &str, seen: &Seen) -> Result<(), PlaybackError> {
    let path = dir.join("seen").join(name);
    let text = serde_json::to_string(seen).map_err(|e| PlaybackError::Session(e.to_string()))?;
    std::fs::write(&path, text).map_err(PlaybackError::io(&path))
}

#[cfg(test)]
mod tests;
