//! The agents compared (acplb on a transport, the TypeScript codex-acp) and how each is started.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context as _, bail};
use tokio::process::Command;

/// The version of the TypeScript codex-acp the benchmark is written against.
pub(crate) const TS_PEER_VERSION: &str = "2.6.0";

/// Where `scripts/install-test-deps --with-ts-peer` puts the TS peer's entry point, under the cache.
const TS_PEER_UNDER_CACHE: &str = "codex-acp-2.6.0/node_modules/@agentclientprotocol/codex-acp/dist/index.js";

/// The mode both agents run in: acplb's default, and the TS peer's equivalent (read-only sandbox;
/// the TS peer's own default is `agent`, a workspace-write sandbox with auto review).
pub(crate) const MODE: &str = "read-only";

/// One agent named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AgentKind {
    /// acplb; `Some(t)` sets `ACPLB_TRANSPORT=t`, `None` leaves acplb's default.
    Acplb { transport: Option<String> },
    /// The TypeScript codex-acp, run with node.
    Ts,
}

/// An agent and the name it was given (`acplb`, `acplb-exec`, `acplb-app-server`, `ts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentSpec {
    pub(crate) name: String,
    pub(crate) kind: AgentKind,
}

impl std::str::FromStr for AgentSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let kind = match s {
            "ts" => AgentKind::Ts,
            "acplb" => AgentKind::Acplb { transport: None },
            _ => match s.strip_prefix("acplb-") {
                Some(t) if !t.is_empty() => AgentKind::Acplb {
                    transport: Some(t.to_owned()),
                },
                _ => {
                    return Err(format!(
                        "unknown agent `{s}`: use `ts`, `acplb` or `acplb-<transport>` (e.g. acplb-exec, acplb-app-server)"
                    ));
                }
            },
        };
        Ok(AgentSpec {
            name: s.to_owned(),
            kind,
        })
    }
}

/// What is needed to start an agent against its Codex home.
#[derive(Debug)]
pub(crate) struct Launcher {
    pub(crate) acplb: PathBuf,
    pub(crate) node: PathBuf,
    pub(crate) ts_peer: PathBuf,
    pub(crate) codex: PathBuf,
    pub(crate) workspace: PathBuf,
    /// `CODEX_HOME`, `MOCK_API_KEY`, `PATH` and an empty `HOME`: alike for every agent, but each
    /// agent's own directories.
    pub(crate) codex_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// `CODEX_HOME=…` as it appears in the environment of this agent's processes.
    pub(crate) home_marker: String,
}

impl Launcher {
    /// The command that starts `agent`: stdio piped, in its own process group, killed on drop.
    pub(crate) fn command(&self, agent: &AgentSpec) -> Command {
        let mut cmd = match &agent.kind {
            AgentKind::Acplb { transport } => {
                let mut cmd = Command::new(&self.acplb);
                cmd.env("ACPLB_CODEX", &self.codex)
                    // Its sessions are kept beside this run's workspace, not in the user's state.
                    .env("ACPLB_STATE_DIR", self.workspace.with_file_name("acplb-state"))
                    .env_remove("ACPLB_TRANSPORT")
                    .env_remove("RUST_LOG");
                if let Some(t) = transport {
                    cmd.env("ACPLB_TRANSPORT", t);
                }
                cmd
            }
            AgentKind::Ts => {
                let mut cmd = Command::new(&self.node);
                cmd.arg(&self.ts_peer)
                    .env("CODEX_PATH", &self.codex)
                    .env("INITIAL_AGENT_MODE", MODE)
                    // Unset: the TS peer would pass them to Codex as `-c` overrides of the shared config.
                    .env_remove("CODEX_CONFIG")
                    .env_remove("MODEL_PROVIDER")
                    .env_remove("DEFAULT_AUTH_REQUEST")
                    .env_remove("APP_SERVER_LOGS");
                cmd
            }
        };
        cmd.envs(self.codex_env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        cmd
    }
}

/// The TS peer's entry point under `$ACPLB_CACHE` (default `~/.cache/acplb`).
pub(crate) fn default_ts_peer() -> anyhow::Result<PathBuf> {
    let cache = match std::env::var_os("ACPLB_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(&std::env::var_os("HOME").context("HOME is not set")?).join(".cache/acplb"),
    };
    Ok(cache.join(TS_PEER_UNDER_CACHE))
}

/// Fails with the install command if the TS peer is missing.
pub(crate) fn check_ts_peer(path: &Path) -> anyhow::Result<()> {
    if !path.is_file() {
        bail!(
            "the TS codex-acp {TS_PEER_VERSION} is not at `{}`; install it with `scripts/install-test-deps --with-ts-peer` or pass --ts-peer",
            path.display()
        );
    }
    Ok(())
}

/// Whether this acplb takes `--transport` (and so reads `ACPLB_TRANSPORT`): its `--help` names it.
pub(crate) fn acplb_has_transport(acplb: &Path) -> bool {
    std::process::Command::new(acplb)
        .arg("--help")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("--transport"))
}

/// `VmHWM` (peak resident set) of `pid` in KiB, from `/proc`.
pub(crate) fn peak_rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("failed to read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no VmHWM in /proc/{pid}/status"))
}

/// Live processes (not zombies) whose environment holds `marker` (`CODEX_HOME=…` of this run).
pub(crate) fn processes_with_env(marker: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let has = environ.split(|b| *b == 0).any(|kv| kv == marker.as_bytes());
            let zombie =
                std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z "));
            has && !zombie
        })
        .collect()
}

/// A process's command line, arguments joined by spaces and cut to 80 characters.
pub(crate) fn process_name(pid: i32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<_> = cmdline
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(String::from_utf8_lossy)
        .collect();
    words.join(" ").chars().take(80).collect()
}
