//! Identity claims across processes: live holders force a suffix, dead ones are reclaimed.

use std::collections::BTreeMap;
use std::process::{Child, Command};

use acplb_atm::context::session_context;
use acplb_atm::identity::{IdentityClaim, Source, resolve};
use serde_json::json;

/// A live process that is not us, killed and reaped on drop.
struct Sleeper(Child);

impl Sleeper {
    fn spawn() -> Self {
        Self(Command::new("sleep").arg("30").spawn().unwrap())
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap()
}

fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn live_holder_gives_a_suffixed_name() {
    let dir = tempfile::tempdir().unwrap();
    let holder = Sleeper::spawn();
    let lock =
        json!({"pid": holder.pid(), "agent_id": "codex:other", "start_time": start_time(holder.pid())});
    std::fs::write(dir.path().join("arch-ctm.lock"), lock.to_string()).unwrap();
    let claim = IdentityClaim::acquire(dir.path(), "arch-ctm", "acplb:a").unwrap();
    assert_eq!(claim.name(), "arch-ctm-2");
    // A second claimant in this very process sees the first as live too.
    let third = IdentityClaim::acquire(dir.path(), "arch-ctm", "acplb:b").unwrap();
    assert_eq!(third.name(), "arch-ctm-3");
    // An atm-agent-mcp lock without a start time is judged by the pid alone.
    std::fs::write(
        dir.path().join("solo.lock"),
        json!({"pid": holder.pid(), "agent_id": "x"}).to_string(),
    )
    .unwrap();
    assert_eq!(
        IdentityClaim::acquire(dir.path(), "solo", "acplb:c")
            .unwrap()
            .name(),
        "solo-2"
    );
}

#[test]
fn dead_or_reused_pid_is_reclaimed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("codex.lock");
    std::fs::write(
        &path,
        json!({"pid": dead_pid(), "agent_id": "codex:gone"}).to_string(),
    )
    .unwrap();
    let claim = IdentityClaim::acquire(dir.path(), "codex", "acplb:new").unwrap();
    assert_eq!(claim.name(), "codex");
    let held: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(held["agent_id"], "acplb:new");
    assert_eq!(held["pid"], std::process::id());
    drop(claim);

    // The pid is alive but belongs to a process started at another time: pid reuse.
    let other = Sleeper::spawn();
    let lock = json!({"pid": other.pid(), "agent_id": "old", "start_time": start_time(other.pid()) + 1});
    std::fs::write(&path, lock.to_string()).unwrap();
    assert_eq!(
        IdentityClaim::acquire(dir.path(), "codex", "acplb:n2")
            .unwrap()
            .name(),
        "codex"
    );
}

#[test]
fn release_on_drop_frees_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let first = IdentityClaim::acquire(dir.path(), "codex", "acplb:1").unwrap();
    let path = first.path().to_owned();
    assert!(path.exists());
    drop(first);
    assert!(!path.exists());
    assert_eq!(
        IdentityClaim::acquire(dir.path(), "codex", "acplb:2")
            .unwrap()
            .name(),
        "codex"
    );
}

#[test]
fn resolution_order_and_fresh_branch_context() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("repo");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(
        ws.join(".atm.toml"),
        "[core]\ndefault_team = \"atm-dev\"\nidentity = \"lead\"\n",
    )
    .unwrap();
    let env: BTreeMap<String, String> = [("ATM_IDENTITY".to_owned(), "env-id".to_owned())].into();
    let r = resolve(None, None, &env, &ws).unwrap();
    assert_eq!((r.identity.as_str(), r.team.as_str()), ("env-id", "atm-dev"));
    assert_eq!(r.identity_source, Source::Env);
    assert!(matches!(r.team_source, Source::AtmToml(_)));

    let before = session_context(&r.identity, &r.team, &ws);
    assert!(
        before.contains("Identity:  env-id\nTeam:      atm-dev\n") && before.contains("Branch:    main\n"),
        "{before}"
    );
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/feature\n").unwrap();
    assert!(session_context(&r.identity, &r.team, &ws).contains("Branch:    feature\n"));
}
