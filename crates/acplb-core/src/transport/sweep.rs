//! Finding and killing what a child left behind.
//!
//! Codex starts helpers in their own sessions (a login-shell snapshot, sandboxed commands under
//! bubblewrap), so killing its process group does not reach them. Every child acplb starts
//! carries a unique environment entry, which its descendants inherit; after stopping the child,
//! every process still carrying that entry is killed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::proc_table;

/// The variable carrying the marker.
pub const MARKER_VAR: &str = "ACPLB_PROCESS_TAG";

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A marker value no other child of any acplb shares.
pub(crate) fn new_marker() -> String {
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Kills every live process whose environment holds `MARKER_VAR=marker` and waits (up to about
/// a second) until they are gone; returns how many were killed.
///
/// The processes are first frozen with `SIGSTOP`, pass after pass until no new one appears, so
/// none can fork while it is being killed; then each gets `SIGKILL`. A killed process takes a
/// moment to die, longer on a loaded machine, so the sweep waits for that and looks again.
pub(crate) fn kill_marked(marker: &str) -> usize {
    kill_matching(&Needle::Exact(format!("{MARKER_VAR}={marker}")))
}

/// Kills every live process started by the acplb process `pid` or by its children, whichever
/// child it was: what the exit guard does once that acplb is gone.
pub(crate) fn kill_all_of(pid: u32) -> usize {
    kill_matching(&Needle::Prefix(format!("{MARKER_VAR}={pid}-")))
}

/// Kills every live process carrying the marker of one long-lived child *and* the environment
/// entry `entry` (`KEY=value`): what that child started for one purpose (Codex's commands for
/// one thread carry `CODEX_THREAD_ID=<thread>`), leaving the child and the rest alone. Runs on
/// a blocking thread.
pub async fn kill_marked_with(marker: String, entry: String) -> usize {
    let needle = Needle::Both(format!("{MARKER_VAR}={marker}"), entry);
    match tokio::task::spawn_blocking(move || kill_matching(&needle)).await {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "the process sweep failed");
            0
        }
    }
}

/// The live processes carrying the marker of one long-lived child and every entry of
/// `entries` (`KEY=value`), in pid order: what it started for one purpose (Codex's command of
/// one tool call carries `CODEX_THREAD_ID` and `CODEX_TOOL_CALL_ID`). Reads the process table on
/// a blocking thread; kills nothing.
pub async fn find_marked_with(marker: String, entries: Vec<String>) -> Vec<u32> {
    let mut wanted = entries;
    wanted.push(format!("{MARKER_VAR}={marker}"));
    let search = move || {
        let mut pids = proc_table::live_with_env(|env| {
            wanted
                .iter()
                .all(|w| env.split(|b| *b == 0).any(|e| e == w.as_bytes()))
        });
        pids.sort_unstable();
        pids
    };
    match tokio::task::spawn_blocking(search).await {
        Ok(pids) => pids,
        Err(e) => {
            tracing::warn!(error = %e, "the process search failed");
            Vec::new()
        }
    }
}

/// What an environment must hold to be marked.
enum Needle {
    Exact(String),
    Prefix(String),
    /// Both entries, exactly.
    Both(String, String),
}

impl Needle {
    fn matches_env(&self, env: &[u8]) -> bool {
        let mut entries = env.split(|b| *b == 0);
        match self {
            Needle::Exact(n) => entries.any(|e| e == n.as_bytes()),
            Needle::Prefix(n) => entries.any(|e| e.starts_with(n.as_bytes())),
            Needle::Both(a, b) => {
                let (mut has_a, mut has_b) = (false, false);
                for e in entries {
                    has_a |= e == a.as_bytes();
                    has_b |= e == b.as_bytes();
                }
                has_a && has_b
            }
        }
    }
}

fn kill_matching(needle: &Needle) -> usize {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut killed = 0;
    loop {
        let frozen = freeze_all(needle);
        if frozen.is_empty() {
            return killed;
        }
        for pid in &frozen {
            if kill(*pid, Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        while frozen.iter().any(|pid| alive(*pid)) {
            if Instant::now() > deadline {
                tracing::warn!(?frozen, "processes survived SIGKILL for a second");
                return killed;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Stops every marked process, repeating until a pass finds no new one.
fn freeze_all(needle: &Needle) -> Vec<Pid> {
    let mut frozen: Vec<Pid> = Vec::new();
    for _ in 0..50 {
        let fresh: Vec<Pid> = marked(needle)
            .into_iter()
            .filter(|p| !frozen.contains(p))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for pid in fresh {
            if kill(pid, Signal::SIGSTOP).is_ok() {
                frozen.push(pid);
            }
        }
    }
    frozen
}

fn alive(pid: Pid) -> bool {
    u32::try_from(pid.as_raw()).is_ok_and(|p| !proc_table::is_zombie(p))
}

fn marked(needle: &Needle) -> Vec<Pid> {
    proc_table::live_with_env(|env| needle.matches_env(env))
        .into_iter()
        .filter_map(|pid| i32::try_from(pid).ok().map(Pid::from_raw))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kills_a_marked_process_in_its_own_session() {
        let marker = new_marker();
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .env(MARKER_VAR, &marker)
            .spawn()
            .unwrap();
        // Wait until `setsid` has become `sleep` (mid-exec, its environment cannot be read) and
        // the process is visible with its environment.
        let needle = Needle::Exact(format!("{MARKER_VAR}={marker}"));
        let comm = format!("/proc/{}/comm", child.id());
        assert!((0..200).any(|_| {
            let is_sleep = std::fs::read_to_string(&comm).is_ok_and(|c| c.trim() == "sleep");
            let seen = is_sleep && !marked(&needle).is_empty();
            if !seen {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            seen
        }));
        assert!(kill_marked(&marker) >= 1);
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(marked(&needle).is_empty());
        assert_eq!(kill_marked("no-such-marker"), 0);
    }

    impl Needle {
        fn matches(&self, entry: &[u8]) -> bool {
            self.matches_env(entry)
        }
    }

    #[test]
    fn all_of_an_acplb_matches_every_marker_it_handed_out_and_no_other() {
        let mine = Needle::Prefix(format!("{MARKER_VAR}=41-"));
        assert!(mine.matches(b"ACPLB_PROCESS_TAG=41-1"));
        assert!(mine.matches(b"ACPLB_PROCESS_TAG=41-27"));
        assert!(
            !mine.matches(b"ACPLB_PROCESS_TAG=411-1"),
            "another acplb's children"
        );
        assert!(!mine.matches(b"OTHER=ACPLB_PROCESS_TAG=41-1"));
    }

    #[test]
    fn both_needs_the_marker_and_the_entry_in_one_environment() {
        let both = Needle::Both(format!("{MARKER_VAR}=7-3"), "CODEX_THREAD_ID=t1".into());
        assert!(both.matches_env(b"A=1\0ACPLB_PROCESS_TAG=7-3\0CODEX_THREAD_ID=t1\0"));
        assert!(!both.matches_env(b"ACPLB_PROCESS_TAG=7-3\0"), "the server itself");
        assert!(
            !both.matches_env(b"ACPLB_PROCESS_TAG=7-3\0CODEX_THREAD_ID=t2"),
            "another session's command"
        );
        assert!(
            !both.matches_env(b"ACPLB_PROCESS_TAG=8-1\0CODEX_THREAD_ID=t1"),
            "another acplb's"
        );
    }
}
