//! A child that dies with acplb, even when acplb is killed with SIGKILL and can clean nothing up.
//!
//! Linux sends a child its "parent death signal" when the thread that started it exits. acplb
//! starts children on its runtime thread, which lives as long as the process, so the signal
//! comes exactly when acplb is gone. Codex's own helpers (bubblewrap, sandboxed commands) already
//! die with Codex. Other systems have no such signal: there the exit guard's sweep, which finds
//! every process carrying one of acplb's markers, Codex itself included, is what stops them.

use tokio::process::Command;

/// Makes `cmd`'s child receive SIGKILL when acplb dies.
#[cfg(target_os = "linux")]
pub(crate) fn kill_child_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    #[expect(unsafe_code, reason = "pre_exec is the only way to run prctl in the child")]
    // SAFETY: the closure runs in the forked child before exec and only calls prctl and
    // getppid, which are async-signal-safe; it touches no memory shared with the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // acplb may have died between fork and prctl: then nobody would send the signal.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(std::io::Error::other("acplb exited while starting the child"));
            }
            Ok(())
        });
    }
}

/// No parent-death signal outside Linux: the exit guard's sweep stops the child instead.
#[cfg(not(target_os = "linux"))]
pub(crate) fn kill_child_with_parent(_cmd: &mut Command) {}
