//! A JSON-RPC line client of the `acplb` binary for the benches (ACP or MCP on its stdio).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use acplb_playback::mock_model::codex_env::{CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel, MockModelHandle};
use serde_json::{Value, json};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");

/// A JSON-RPC line peer: acplb over stdio, as an ACP or an MCP server.
pub(crate) struct Peer {
    child: Child,
    out: BufReader<ChildStdout>,
    next_id: u64,
}

impl Peer {
    pub(crate) fn spawn(env: &[(String, String)], args: &[&str], state: &std::path::Path) -> Peer {
        let mut child = Command::new(ACPLB)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("RUST_LOG", "off")
            .env("ACPLB_STATE_DIR", state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Peer {
            child,
            out,
            next_id: 0,
        }
    }

    pub(crate) fn send(&mut self, msg: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// A request's result, notifications skipped.
    #[allow(
        clippy::needless_pass_by_value,
        reason = "call sites pass `json!` temporaries"
    )]
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "acplb closed stdout");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
        }
    }

    pub(crate) fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    pub(crate) fn close(mut self) {
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
    }
}

/// The median of `v`.
pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The mock model, its Codex environment, and acplb's environment variables for it.
pub(crate) type Live = (MockModelHandle, CodexTestEnv, Vec<(String, String)>);

/// The mock model, a Codex test environment on it, and the environment acplb needs to run
/// that Codex; `None` (and `what` reported skipped) when the pinned Codex is not installed.
pub(crate) fn live(what: &str) -> Option<Live> {
    if let Err(e) = codex_binary() {
        println!("{what}: skipped ({e})");
        return None;
    }
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let env = CodexTestEnv::new(mock.base_url()).unwrap();
    let vars: Vec<(String, String)> = env
        .env_vars()
        .into_iter()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .chain([("ACPLB_CODEX".to_owned(), env.codex_path().display().to_string())])
        .collect();
    Some((mock, env, vars))
}
