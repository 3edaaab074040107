//! The exit guard: a small process that outlives acplb to kill what acplb's children left.
//!
//! Codex dies with acplb (parent-death signal), but Codex detaches some helpers into sessions
//! of their own (its login-shell snapshot, sandboxed commands), and a user's shell start-up
//! files can keep those alive long after Codex is gone. When acplb stops normally it sweeps
//! them itself; when it is killed outright it cannot. The guard holds the read end of a pipe
//! whose write end only acplb holds: end of input means acplb is gone, however it died, and the
//! guard kills every process carrying one of acplb's markers, then exits.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running guard; dropping it (acplb's normal exit) lets the guard sweep and exit too.
#[derive(Debug)]
pub struct ExitGuard {
    child: Child,
}

impl ExitGuard {
    /// Starts `exe` (acplb itself) with `args`, which must lead to [`run_exit_guard`] for this
    /// process's pid.
    pub fn spawn(exe: &Path, args: &[&str]) -> std::io::Result<ExitGuard> {
        let mut cmd = Command::new(exe);
        // It needs nothing from acplb's environment, and should hold none of its secrets.
        cmd.env_clear();
        if let Some(level) = std::env::var_os("RUST_LOG") {
            cmd.env("RUST_LOG", level);
        }
        let child = cmd
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            // Its own group: a signal to acplb's group (a terminal's Ctrl-C) must not take the
            // guard down before it has done its work.
            .process_group(0)
            .spawn()?;
        Ok(ExitGuard { child })
    }

    /// The guard's pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        // Closing our end is the signal; the guard reaps itself into init when we are gone.
        drop(self.child.stdin.take());
    }
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
