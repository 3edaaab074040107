//! Process liveness for lock holders: `kill(pid, 0)` plus the `/proc` start time against pid reuse.

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// Whether a process with this pid exists (a zombie counts; `EPERM` means it exists but is not ours).
pub(crate) fn pid_alive(pid: i64) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return false };
    // Pid 0 and negative pids address process groups; they never name a lock holder.
    if raw <= 0 {
        return false;
    }
    match kill(Pid::from_raw(raw), None) {
        Ok(()) | Err(Errno::EPERM) => true,
        Err(_) => false,
    }
}

/// The process start time in clock ticks since boot (`/proc/<pid>/stat` field 22), on Linux.
#[cfg(target_os = "linux")]
pub(crate) fn start_time(pid: i64) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses,
    // so count fields from the last `)`: the next field is 3 (state), field 22 is 19 further.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// No `/proc` here: no start time is recorded, and a live pid counts as its holder (a reused
/// pid keeps a stale claim until that process ends).
#[cfg(not(target_os = "linux"))]
pub(crate) fn start_time(_pid: i64) -> Option<u64> {
    None
}

/// This process's pid.
pub(crate) fn own_pid() -> i64 {
    i64::from(std::process::id())
}

/// Whether a recorded holder is still the process that wrote the record: alive, and when a start
/// time was recorded and `/proc` can tell, started at that time.
pub(crate) fn holder_alive(pid: i64, recorded_start: Option<u64>) -> bool {
    if !pid_alive(pid) {
        return false;
    }
    match (recorded_start, start_time(pid)) {
        (Some(recorded), Some(actual)) => recorded == actual,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn own_process_is_alive_with_matching_start() {
        let me = own_pid();
        assert!(pid_alive(me));
        let start = start_time(me);
        assert!(start.is_some());
        assert!(holder_alive(me, start));
        assert!(!holder_alive(me, start.map(|s| s + 1)));
    }

    #[test]
    fn reaped_child_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i64::from(child.id());
        child.wait().unwrap();
        assert!(!pid_alive(pid));
        assert!(!pid_alive(0));
        assert!(!pid_alive(-1));
    }
}
