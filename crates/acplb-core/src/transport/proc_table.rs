//! Which processes run, and what their environments hold: `/proc` on Linux, the kernel's process
//! table (through `sysinfo`) on macOS, nothing elsewhere (the sweep then finds nothing to kill).

/// The pids of the live (not zombie) processes other than this one whose environment, as
/// `KEY=value` entries each ended by a NUL byte, `wanted` accepts. A process whose environment
/// cannot be read (another user's) is left out.
#[cfg(target_os = "linux")]
pub(super) fn live_with_env(mut wanted: impl FnMut(&[u8]) -> bool) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| wanted(&env)))
        .filter(|pid| !is_zombie(*pid))
        .collect()
}

/// Whether `pid` is a zombie or gone.
#[cfg(target_os = "linux")]
pub(super) fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[cfg(target_os = "macos")]
pub(super) fn live_with_env(mut wanted: impl FnMut(&[u8]) -> bool) -> Vec<u32> {
    use sysinfo::{ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System, UpdateKind};
    let mut system = System::new();
    system.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing().with_environ(UpdateKind::Always),
    );
    let me = std::process::id();
    let mut env = Vec::new();
    system
        .processes()
        .iter()
        .filter(|(pid, p)| pid.as_u32() != me && p.status() != ProcessStatus::Zombie)
        .filter(|(_, p)| {
            env.clear();
            for entry in p.environ() {
                env.extend_from_slice(entry.as_encoded_bytes());
                env.push(0);
            }
            wanted(&env)
        })
        .map(|(pid, _)| pid.as_u32())
        .collect()
}

#[cfg(target_os = "macos")]
pub(super) fn is_zombie(pid: u32) -> bool {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System};
    let pid = Pid::from_u32(pid);
    let mut system = System::new();
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing(),
    );
    system
        .process(pid)
        .is_none_or(|p| p.status() == ProcessStatus::Zombie)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(super) fn live_with_env(_wanted: impl FnMut(&[u8]) -> bool) -> Vec<u32> {
    Vec::new()
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(super) fn is_zombie(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_found_by_its_environment_and_is_gone_once_reaped() {
        let entry = format!("ACPLB_PROC_TABLE_TEST={}", std::process::id());
        let (key, value) = entry.split_once('=').unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(key, value)
            .spawn()
            .unwrap();
        let pid = child.id();
        let has_entry = |env: &[u8]| env.split(|b| *b == 0).any(|e| e == entry.as_bytes());
        // The environment is readable once `sleep` has been exec'd.
        assert!((0..400).any(|_| {
            let seen = live_with_env(has_entry) == vec![pid];
            if !seen {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            seen
        }));
        assert!(!is_zombie(pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(is_zombie(pid), "a reaped child counts as gone");
        assert!(live_with_env(has_entry).is_empty());
    }
}
