//! The exit guard: a small process that outlives acplb to kill what acplb's children left.
//!
//! Codex dies with acplb (parent-death signal), but Codex detaches some helpers into sessions
//! of their own (its login-shell snapshot, sandboxed commands), and a user's shell start-up
//! files can keep those alive long after Codex is gone. When acplb stops normally it sweeps
//! them itself; when it is killed outright it cannot. The guard holds the read end of a pipe
//! whose write end only acplb holds: end of input means acplb is gone, however it died, and the
//! guard kills every process carrying one of acplb's markers, then exits.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// Starts `exe` (acplb itself) with `args`, which must lead to [`run_exit_guard`] for this
/// process's pid. The returned child's stdin is the pipe whose end is the signal: it must stay
/// open until acplb exits.
fn spawn_guard(exe: &Path, args: &[&str]) -> std::io::Result<Child> {
    let mut cmd = Command::new(exe);
    // It needs nothing from acplb's environment, and should hold none of its secrets.
    cmd.env_clear();
    if let Some(level) = std::env::var_os("RUST_LOG") {
        cmd.env("RUST_LOG", level);
    }
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        // Its own group: a signal to acplb's group (a terminal's Ctrl-C) must not take the
        // guard down before it has done its work.
        .process_group(0)
        .spawn()
}

/// What starting the guard needs, and whether it runs.
#[derive(Debug)]
enum State {
    Armed {
        exe: PathBuf,
        args: Vec<String>,
    },
    /// Held only so that its pipe stays open until the process exits.
    Running {
        _held: Child,
    },
    Failed,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Says how to start the guard (acplb itself, with `args`); it starts with the first child
/// (`ensure_started`), so a session that never runs Codex never pays for it, and start-up
/// does not wait for it.
pub fn arm(exe: PathBuf, args: Vec<String>) {
    if let Ok(mut state) = STATE.lock() {
        *state = Some(State::Armed { exe, args });
    }
}

/// Starts the guard if it is armed and not running yet. Called before every child is started;
/// after the first call this is a lock and a check.
pub(crate) fn ensure_started() {
    let Ok(mut state) = STATE.lock() else { return };
    let Some(State::Armed { exe, args }) = state.as_ref() else {
        return;
    };
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    *state = Some(match spawn_guard(exe, &args) {
        // Kept in the static until the process exits: then the guard's pipe closes.
        Ok(guard) => State::Running { _held: guard },
        Err(e) => {
            tracing::warn!(error = %e, "no exit guard: starting it failed; a SIGKILLed acplb may leave Codex helpers behind");
            State::Failed
        }
    });
}

/// The guard's body: waits for end of input, then kills everything acplb `pid` started.
/// Returns how many processes it killed.
pub fn run_exit_guard(pid: u32) -> usize {
    // Nothing is ever written; this returns at end of input (or if stdin breaks, which is
    // no reason to wait any longer either).
    if let Err(e) = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink()) {
        tracing::debug!(error = %e, "the exit guard's pipe broke");
    }
    super::sweep::kill_all_of(pid)
}
