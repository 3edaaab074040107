//! The `codex app-server`s running for acplb on this machine (each carries acplb's process tag
//! in its environment) and the version each runs, asked of the very file it was started from
//! (`/proc/<pid>/exe`, which stays readable when an upgrade replaced it on disk). Linux only;
//! elsewhere nothing is listed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_core::transport::MARKER_VAR;

use super::probe::{self, Outcome};

/// One server: its pid, and the version its binary says (or why it says none).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Running {
    pub(super) pid: u32,
    pub(super) version: String,
}

/// Every app-server acplb started that is alive now, by pid.
pub(super) async fn servers(limit: Duration) -> Vec<Running> {
    let mut found = Vec::new();
    for pid in tagged_app_servers(Path::new("/proc")) {
        let exe = PathBuf::from(format!("/proc/{pid}/exe"));
        let version = match probe::run(&exe, &["--version"], std::env::temp_dir(), limit).await {
            Outcome::Exited { status, stdout, .. } if status.success() => probe::first_line(&stdout),
            Outcome::TimedOut => "unknown (`--version` gave no answer)".to_owned(),
            _ => "unknown (`--version` failed)".to_owned(),
        };
        found.push(Running { pid, version });
    }
    found
}

/// The pids under `proc` whose environment has acplb's tag, whose command line runs
/// `app-server`, and whose program is Codex itself (not the Node launcher npm installs).
fn tagged_app_servers(proc: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(proc) else {
        return Vec::new();
    };
    let tag = format!("{MARKER_VAR}=");
    let mut pids: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let dir = proc.join(pid.to_string());
            let parts = |name: &str| -> Vec<Vec<u8>> {
                std::fs::read(dir.join(name))
                    .unwrap_or_default()
                    .split(|b| *b == 0)
                    .map(<[u8]>::to_vec)
                    .collect()
            };
            let tagged = parts("environ").iter().any(|v| v.starts_with(tag.as_bytes()));
            let serves = parts("cmdline").iter().skip(1).any(|a| a == b"app-server");
            let codex = std::fs::read_link(dir.join("exe")).is_ok_and(|exe| {
                exe.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("codex"))
            });
            tagged && serves && codex
        })
        .collect();
    pids.sort_unstable();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tagged_codex_app_servers_are_listed() {
        let proc = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let codex = bin.path().join("codex");
        let node = bin.path().join("node");
        std::fs::write(&codex, "").unwrap();
        std::fs::write(&node, "").unwrap();
        let add = |pid: u32, exe: &Path, env: &str, cmd: &str| {
            let dir = proc.path().join(pid.to_string());
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("environ"), env.replace(' ', "\0")).unwrap();
            std::fs::write(dir.join("cmdline"), cmd.replace(' ', "\0")).unwrap();
            std::os::unix::fs::symlink(exe, dir.join("exe")).unwrap();
        };
        add(
            10,
            &codex,
            "HOME=/h ACPLB_PROCESS_TAG=x",
            "codex app-server -c a=b",
        );
        add(11, &node, "ACPLB_PROCESS_TAG=x", "node codex.js app-server");
        add(12, &codex, "HOME=/h", "codex app-server");
        add(13, &codex, "ACPLB_PROCESS_TAG=x", "codex exec --json");
        add(9, &codex, "ACPLB_PROCESS_TAG=y", "codex app-server");
        std::fs::create_dir(proc.path().join("self")).unwrap();
        assert_eq!(tagged_app_servers(proc.path()), [9, 10]);
        assert!(tagged_app_servers(Path::new("/no/such/proc")).is_empty());
    }
}
