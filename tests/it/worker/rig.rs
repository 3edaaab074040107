//! One test's world: the mock model, a Codex home and workspace, ATM's home with team `demo`,
//! a `workers.toml`, and `acplb worker` running on it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_atm::MailStore;
use acplb_playback::mock_model::codex_env::{CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel, MockModelHandle, Script};
use serde_json::Value;

use crate::harness::{Acplb, eventually, processes_with_env};

/// Scenarios the worker tests use, over the built-in ones.
const SCENARIOS: &str = r#"
[scenarios.answer]
[[scenarios.answer.steps]]
actions = [{ type = "message", text = "bob here: answered turn {turns}" }]

[scenarios.slow]
description = "a command of 2 s, then an answer"
[[scenarios.slow.steps]]
actions = [{ type = "exec", cmd = "sleep 2", yield_time_ms = 10000 }]
[[scenarios.slow.steps]]
actions = [{ type = "message", text = "slow answer after {last_output}" }]

[scenarios.hang]
description = "a command of 60 s (killed by the test)"
[[scenarios.hang.steps]]
actions = [{ type = "exec", cmd = "sleep 60", yield_time_ms = 70000 }]
[[scenarios.hang.steps]]
actions = [{ type = "message", text = "hang finished" }]
"#;

/// How long anything a test waits for may take on a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub struct Rig {
    pub mock: MockModelHandle,
    pub env: CodexTestEnv,
    atm: tempfile::TempDir,
    vars: Vec<(String, String)>,
    pub daemon: Option<Acplb>,
}

impl Rig {
    pub fn new() -> Rig {
        if let Err(e) = codex_binary() {
            panic!("{e}");
        }
        let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "worker-test").unwrap());
        let mock =
            MockModel::start(MockConfig::default().with_script(script)).expect("the mock model starts");
        let env = CodexTestEnv::new(mock.base_url()).expect("a codex test env");
        let atm = tempfile::tempdir().unwrap();
        let team = atm.path().join(".claude/teams/demo");
        std::fs::create_dir_all(team.join("inboxes")).unwrap();
        std::fs::write(
            team.join("config.json"),
            r#"{"name":"demo","members":[{"name":"alice"},{"name":"bob","agentType":"codex"},{"name":"carol"},{"name":"dave"}]}"#,
        )
        .unwrap();
        let mut vars: Vec<(String, String)> = env
            .env_vars()
            .into_iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            .collect();
        vars.push(("ACPLB_CODEX".into(), env.codex_path().display().to_string()));
        vars.push(("HOME".into(), env.root().display().to_string()));
        vars.push(("ATM_HOME".into(), atm.path().display().to_string()));
        vars.push((
            "XDG_CONFIG_HOME".into(),
            atm.path().join("xdg").display().to_string(),
        ));
        vars.push(("RUST_LOG".into(), "info".into()));
        Rig {
            mock,
            env,
            atm,
            vars,
            daemon: None,
        }
    }

    /// Sets `key` in the daemon's environment (before [`Rig::start`]).
    pub fn set_var(&mut self, key: &str, value: &str) {
        self.vars.push((key.to_owned(), value.to_owned()));
    }

    pub fn workspace(&self) -> PathBuf {
        self.env.workspace()
    }

    pub fn state_dir(&self) -> PathBuf {
        self.env.root().join(".local/state/acplb")
    }

    pub fn config_path(&self) -> PathBuf {
        self.atm.path().join("workers.toml")
    }

    /// Writes `workers.toml`: fast restarts, then `agents` (TOML tables).
    pub fn write_config(&self, agents: &str) {
        let text = format!(
            "[workers]\nhealth_check_interval_secs = 5\nrestart_backoff_secs = 1\nmax_restart_attempts = 3\nshutdown_timeout_secs = 10\n\n{agents}"
        );
        std::fs::write(self.config_path(), text).unwrap();
    }

    /// An agent table for `name@demo` working in the workspace.
    pub fn agent(&self, name: &str, extra: &str) -> String {
        format!(
            "[workers.agents.\"{name}@demo\"]\ncwd = \"{}\"\nmode = \"auto\"\n{extra}\n",
            self.workspace().display()
        )
    }

    /// Starts `acplb worker` with the config written.
    pub fn start(&mut self) {
        let config = self.config_path().display().to_string();
        let args = [
            "-c",
            "features.unbounded_connection_retries=false",
            "worker",
            "--workers-config",
            &config,
        ];
        self.daemon = Some(Acplb::spawn(&args, &self.vars, &self.workspace()));
    }

    pub fn daemon(&mut self) -> &mut Acplb {
        self.daemon.as_mut().expect("the daemon was started")
    }

    pub fn stderr(&self) -> String {
        self.daemon.as_ref().map(Acplb::stderr).unwrap_or_default()
    }

    /// Runs `acplb ARGS` (a command beside the daemon) to the end: exit code, stdout, stderr.
    pub fn acplb(&self, args: &[&str]) -> (i32, String, String) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
            .args(args)
            .envs(self.vars.iter().cloned())
            .env("ACPLB_STATE_DIR", self.state_dir())
            .output()
            .expect("acplb runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `acplb worker status --json`, once the daemon answers.
    pub async fn status(&self) -> Value {
        let mut last = String::new();
        for _ in 0..600 {
            let (code, out, err) = self.acplb(&["worker", "status", "--json"]);
            if code == 0 {
                return serde_json::from_str(&out).unwrap();
            }
            last = err;
            if let Some(d) = &self.daemon {
                let stat = std::fs::read_to_string(format!("/proc/{}/stat", d.pid)).unwrap_or_default();
                assert!(
                    !stat.is_empty() && !stat.contains(") Z "),
                    "the daemon exited:\n{}",
                    self.stderr()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the daemon never answered status: {last}\n{}", self.stderr());
    }

    /// The status of one worker.
    pub async fn worker(&self, agent: &str) -> Value {
        let status = self.status().await;
        status["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["agent"] == agent)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Waits until `agent`'s state is `state`.
    pub async fn wait_state(&self, agent: &str, state: &str) -> Value {
        let start = std::time::Instant::now();
        loop {
            let w = self.worker(agent).await;
            if w["state"] == state {
                return w;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "{agent} never became {state}: {w}\n{}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A teammate of team `demo` sending mail, as Claude Code's file protocol has it.
    pub fn teammate(&self, name: &str) -> MailStore {
        MailStore::new(self.atm.path().join(".claude"), name, "demo").unwrap()
    }

    /// `agent`'s inbox as records.
    pub fn inbox(&self, agent: &str) -> Vec<Value> {
        let path = self
            .atm
            .path()
            .join(format!(".claude/teams/demo/inboxes/{agent}.json"));
        std::fs::read_to_string(path).map_or_else(|_| Vec::new(), |t| serde_json::from_str(&t).unwrap())
    }

    /// The records in `to`'s inbox sent by `from`.
    pub fn mail_from(&self, to: &str, from: &str) -> Vec<Value> {
        self.inbox(to).into_iter().filter(|r| r["from"] == from).collect()
    }

    /// Waits until `to` holds `n` messages from `from`; returns them.
    pub async fn wait_mail(&self, to: &str, from: &str, n: usize) -> Vec<Value> {
        let ok = eventually(PATIENCE, || self.mail_from(to, from).len() >= n).await;
        let got = self.mail_from(to, from);
        assert!(
            ok,
            "{to} got {} of {n} messages from {from}: {got:?}\n{}",
            got.len(),
            self.stderr()
        );
        got
    }

    /// The team's config.json.
    pub fn team_config(&self) -> Value {
        let path = self.atm.path().join(".claude/teams/demo/config.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    pub fn atm_home(&self) -> &Path {
        self.atm.path()
    }

    /// `CODEX_HOME=...`: every Codex process of this test (and the daemon) has it.
    pub fn codex_marker(&self) -> String {
        format!("CODEX_HOME={}", self.env.home().display())
    }

    /// This test's Codex processes (not the daemon, not its helpers): app-servers, execs, and
    /// the commands they run.
    pub fn codex_processes(&self) -> Vec<u32> {
        let daemon = self.daemon.as_ref().map(|d| d.pid);
        processes_with_env(&self.codex_marker())
            .into_iter()
            .filter(|p| Some(*p) != daemon)
            .filter(|p| {
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
                !String::from_utf8_lossy(first).ends_with("acplb")
            })
            .collect()
    }

    /// Sends SIGTERM to the daemon and waits for it to exit: its exit code and how long.
    pub async fn stop(&mut self) -> (Option<i32>, Duration) {
        let daemon = self.daemon();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(daemon.pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        daemon.wait_exit(PATIENCE).await
    }

    pub fn signal(&mut self, signal: nix::sys::signal::Signal) {
        let pid = self.daemon().pid;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    }

    /// The Codex threads the mock model saw (their `thread-id` headers).
    pub fn threads(&self) -> std::collections::BTreeSet<String> {
        self.mock
            .requests()
            .iter()
            .filter_map(|r| r.header("thread-id").map(str::to_owned))
            .collect()
    }

    /// Requests the mock model received whose input holds `needle`.
    pub fn requests_with(&self, needle: &str) -> usize {
        self.mock
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains(needle))
            .count()
    }
}

/// A message's text, without the marker a JSON-looking text gets.
pub fn text(record: &Value) -> String {
    acplb_atm::text::decode(record["text"].as_str().unwrap_or_default()).to_owned()
}
