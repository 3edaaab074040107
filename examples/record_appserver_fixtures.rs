//! Records the app-server decoder's fixtures from the real Codex CLI against the project's mock
//! model: `cargo run --example record_appserver_fixtures -- crates/acplb-codex/tests/fixtures/appserver`.
//!
//! Each fixture (`NAME.jsonl`) is one `codex app-server` session over stdio, both directions in
//! the order they happened, one `{"dir": "in" | "out", "msg": {...}}` per line (`in` = from
//! Codex): `initialize`, `initialized`, `thread/start`, one `turn/start` per prompt, and the
//! answers to Codex's requests (approvals get the decision the case names). Nothing is changed
//! except this machine's paths: the temporary workspace, Codex home and directory become
//! `/workspace`, `/codex-home` and `/codex-test`, the home directory `$HOME`, and the playback
//! binary `playback`, so the files are stable and hold no local paths. They hold no secret: the
//! mock model's key is a dummy and travels only in Codex's environment.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use acplb_playback::mock_model::codex_env::CodexTestEnv;
use acplb_playback::mock_model::{MockConfig, MockModel};
use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The longest wait for one message from Codex.
const LIMIT: Duration = Duration::from_secs(60);

/// How the case answers an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Accept,
    AcceptForSession,
    /// The `acceptWithExecpolicyAmendment` decision Codex offered, echoed back.
    Always,
    Decline,
}

/// Which MCP server the case registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mcp {
    None,
    /// `playback mcp-echo` as `mockmcp`, its tools approved in the config.
    Approved,
    /// `playback mcp-echo` as `mockmcp`; Codex asks before each tool call.
    Ask,
}

#[derive(Debug, Clone)]
struct Case {
    name: &'static str,
    prompts: Vec<&'static str>,
    approval_policy: &'static str,
    sandbox: &'static str,
    config: Vec<&'static str>,
    decision: Decision,
    mcp: Mcp,
    /// Send `turn/interrupt` once a command containing this text has started.
    interrupt_on: Option<&'static str>,
}

fn case(name: &'static str, prompt: &'static str) -> Case {
    Case {
        name,
        prompts: vec![prompt],
        approval_policy: "on-request",
        sandbox: "workspace-write",
        config: Vec::new(),
        decision: Decision::Accept,
        mcp: Mcp::None,
        interrupt_on: None,
    }
}

fn cases() -> Vec<Case> {
    let read_only = |name, prompt, decision| Case {
        sandbox: "read-only",
        decision,
        ..case(name, prompt)
    };
    vec![
        case("plain", "scenario:plain Say hello"),
        case("reasoning", "scenario:reasoning What is 2 + 2?"),
        case("shell", "scenario:shell List the files"),
        case("stream-shell", "scenario:stream_shell Print two lines"),
        case("failing-command", "scenario:fail Run the failing command"),
        case("patch-auto", "scenario:patch Edit the files"),
        read_only(
            "patch-approval-accept",
            "scenario:patch Edit the files",
            Decision::Accept,
        ),
        read_only(
            "patch-approval-decline",
            "scenario:patch Edit the files",
            Decision::Decline,
        ),
        read_only(
            "patch-delete",
            "scenario:patch_delete Delete main.py",
            Decision::Accept,
        ),
        read_only(
            "command-approval-accept",
            "scenario:escalate Run it outside",
            Decision::Accept,
        ),
        read_only(
            "command-approval-decline",
            "scenario:escalate Run it outside",
            Decision::Decline,
        ),
        read_only(
            "command-approval-always",
            "scenario:escalate Run it outside",
            Decision::Always,
        ),
        read_only(
            "command-approval-session",
            "scenario:escalate_twice Run it twice",
            Decision::AcceptForSession,
        ),
        Case {
            mcp: Mcp::Approved,
            ..case("mcp", "scenario:mcp Call echo")
        },
        Case {
            mcp: Mcp::Ask,
            ..case("mcp-approval-accept", "scenario:mcp Call echo")
        },
        Case {
            mcp: Mcp::Ask,
            decision: Decision::AcceptForSession,
            ..case("mcp-approval-session", "scenario:mcp Call echo")
        },
        Case {
            mcp: Mcp::Ask,
            decision: Decision::Decline,
            ..case("mcp-approval-decline", "scenario:mcp Call echo")
        },
        Case {
            config: vec!["tools.update_plan.enabled=true"],
            ..case("plan", "scenario:plan Make a plan")
        },
        case("http500", "scenario:http500 hi"),
        case("http401", "scenario:http401 hi"),
        case("websearch", "scenario:websearch Search the web"),
        case("big-output", "scenario:bigoutput Print a lot"),
        Case {
            prompts: vec!["scenario:plain Say hello", "scenario:history And again"],
            ..case("usage", "")
        },
        Case {
            interrupt_on: Some("sleep 30"),
            ..case("interrupt", "scenario:sleep Wait")
        },
    ]
}

/// One running `codex app-server` and the transcript of its session.
struct Session<'a> {
    case: &'a Case,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    transcript: Vec<String>,
    next_id: u64,
    thread_id: String,
    turn_id: String,
}

impl<'a> Session<'a> {
    fn start(case: &'a Case, env: &CodexTestEnv) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(env.codex_path());
        command.arg("app-server");
        for entry in &case.config {
            command.args(["-c", entry]);
        }
        // A home of its own: login shells (`bash -lc`) then skip the user's profile, whose
        // version managers can stall an unsandboxed command (a stale `pyenv rehash` lock makes
        // every login shell wait 60 s) and print machine-specific noise.
        let mut child = command
            .envs(env.env_vars())
            .env("HOME", env.root())
            .current_dir(env.workspace())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .context("spawning codex app-server")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        Ok(Session {
            case,
            child,
            stdin,
            stdout,
            transcript: Vec::new(),
            next_id: 0,
            thread_id: String::new(),
            turn_id: String::new(),
        })
    }

    async fn send(&mut self, msg: Value) -> anyhow::Result<()> {
        self.transcript
            .push(json!({"dir": "out", "msg": msg}).to_string());
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await?;
        Ok(self.stdin.flush().await?)
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await?;
        Ok(id)
    }

    /// Reads messages (answering Codex's requests) until one satisfies `done`.
    async fn until(&mut self, done: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
        loop {
            let line = tokio::time::timeout(LIMIT, self.stdout.next_line())
                .await
                .context("codex app-server went silent")??
                .context("codex app-server closed its stdout")?;
            let msg: Value = serde_json::from_str(&line).context("a line from codex is not JSON")?;
            self.transcript.push(json!({"dir": "in", "msg": msg}).to_string());
            self.handle(&msg).await?;
            if done(&msg) {
                return Ok(msg);
            }
        }
    }

    async fn response(&mut self, id: u64) -> anyhow::Result<Value> {
        let msg = self
            .until(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
            .await?;
        if let Some(error) = msg.get("error") {
            bail!("request {id} failed: {error}");
        }
        Ok(msg["result"].clone())
    }

    async fn handle(&mut self, msg: &Value) -> anyhow::Result<()> {
        let method = msg["method"].as_str().unwrap_or_default();
        if let (Some(trigger), "item/started") = (self.case.interrupt_on, method)
            && msg["params"]["item"]["command"]
                .as_str()
                .is_some_and(|c| c.contains(trigger))
        {
            let params = json!({"threadId": self.thread_id, "turnId": self.turn_id});
            self.request("turn/interrupt", params).await?;
        }
        let Some(id) = msg.get("id").filter(|_| !method.is_empty()).cloned() else {
            return Ok(());
        };
        let reply = match answer(method, &msg["params"], self.case.decision) {
            Some(result) => json!({"id": id, "result": result}),
            None => {
                json!({"id": id, "error": {"code": -32601, "message": format!("recorder does not handle {method}")}})
            }
        };
        self.send(reply).await
    }

    async fn run(&mut self, workspace: &Path) -> anyhow::Result<()> {
        let id = self
            .request(
                "initialize",
                json!({"clientInfo": {"name": "acplb_fixture_recorder", "title": "acplb fixture recorder",
                    "version": "0.0.1"}, "capabilities": {"experimentalApi": false}}),
            )
            .await?;
        self.response(id).await?;
        self.send(json!({"method": "initialized"})).await?;
        let params = json!({"cwd": workspace, "approvalPolicy": self.case.approval_policy,
            "sandbox": self.case.sandbox});
        let id = self.request("thread/start", params).await?;
        let thread = self.response(id).await?;
        thread["thread"]["id"]
            .as_str()
            .context("thread/start gave no thread id")?
            .clone_into(&mut self.thread_id);
        for prompt in self.case.prompts.clone() {
            let params = json!({"threadId": self.thread_id,
                "input": [{"type": "text", "text": prompt, "text_elements": []}]});
            let id = self.request("turn/start", params).await?;
            let turn = self.response(id).await?;
            turn["turn"]["id"]
                .as_str()
                .unwrap_or_default()
                .clone_into(&mut self.turn_id);
            self.until(|m| m["method"] == "turn/completed").await?;
        }
        // Trailing notifications (usage, status) come right after `turn/completed`.
        let _trailing = tokio::time::timeout(Duration::from_millis(500), self.until(|_| false)).await;
        Ok(())
    }

    async fn finish(mut self) -> anyhow::Result<Vec<String>> {
        self.stdin.shutdown().await?;
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(self.transcript)
    }
}

/// The `result` answering one request from Codex under `decision`; `None` for requests the
/// recorder does not know.
fn answer(method: &str, params: &Value, decision: Decision) -> Option<Value> {
    let word = match decision {
        Decision::Accept | Decision::Always => "accept",
        Decision::AcceptForSession => "acceptForSession",
        Decision::Decline => "decline",
    };
    match method {
        "item/commandExecution/requestApproval" => {
            let always = params["availableDecisions"].as_array().and_then(|all| {
                all.iter()
                    .find(|d| d.get("acceptWithExecpolicyAmendment").is_some())
            });
            match (decision, always) {
                (Decision::Always, Some(amendment)) => Some(json!({"decision": amendment})),
                _ => Some(json!({"decision": word})),
            }
        }
        "item/fileChange/requestApproval" => Some(json!({"decision": word})),
        "mcpServer/elicitation/request" => Some(match decision {
            Decision::Decline => json!({"action": "decline", "content": null, "_meta": null}),
            Decision::AcceptForSession => {
                json!({"action": "accept", "content": {}, "_meta": {"persist": "session"}})
            }
            Decision::Accept | Decision::Always => json!({"action": "accept", "content": {}, "_meta": null}),
        }),
        "item/permissions/requestApproval" => Some(json!({"permissions": {}, "scope": "turn"})),
        "item/tool/requestUserInput" => Some(json!({"answers": {}})),
        _ => None,
    }
}

/// The `playback` binary (its `mcp-echo` is the MCP server): next to this example's target
/// directory, built first when missing.
fn playback_bin() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .context("no target directory")?
        .join("playback");
    if !bin.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "--quiet", "-p", "acplb-playback", "--bin", "playback"])
            .status()?;
        if !status.success() || !bin.is_file() {
            bail!("could not build playback at {}", bin.display());
        }
    }
    Ok(bin)
}

fn environment(case: &Case, base_url: &str, playback: &Path) -> anyhow::Result<CodexTestEnv> {
    let mut builder = CodexTestEnv::builder(base_url);
    if case.mcp != Mcp::None {
        let quote = |s: &str| Value::String(s.to_owned()).to_string();
        let mut toml = format!(
            "[mcp_servers.mockmcp]\ncommand = {}\nargs = [\"mcp-echo\"]\n",
            quote(&playback.display().to_string())
        );
        if case.mcp == Mcp::Approved {
            toml.push_str("default_tools_approval_mode = \"approve\"\n");
        }
        builder = builder.extra_config(&toml);
    }
    Ok(builder.build()?)
}

fn normalize(text: &str, env: &CodexTestEnv, playback: &Path) -> String {
    let mut out = text.replace(&playback.display().to_string(), "playback");
    out = out.replace(&env.workspace().display().to_string(), "/workspace");
    out = out.replace(&env.home().display().to_string(), "/codex-home");
    out = out.replace(&env.root().display().to_string(), "/codex-test");
    // Login-shell noise such as "pyenv: cannot rehash: <home>/.pyenv/shims" names the home.
    match std::env::var("HOME") {
        Ok(home) if home.len() > 1 => out.replace(&format!("{home}/"), "$HOME/"),
        _ => out,
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .context("usage: record_appserver_fixtures OUT_DIR [CASE...]")?;
    let only: Vec<String> = std::env::args().skip(2).collect();
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let mock = MockModel::start(MockConfig::default())?;
    let playback = playback_bin()?;
    for case in cases() {
        if !only.is_empty() && !only.iter().any(|name| name == case.name) {
            continue;
        }
        // A fresh workspace per case: patches must find the files as the scenario expects.
        let env = environment(&case, &mock.base_url(), &playback)?;
        let mut session = Session::start(&case, &env)?;
        let result = session.run(&env.workspace()).await;
        let transcript = session.finish().await?;
        let text = transcript.join("\n") + "\n";
        std::fs::write(
            dir.join(format!("{}.jsonl", case.name)),
            normalize(&text, &env, &playback),
        )?;
        result.with_context(|| format!("recording {}", case.name))?;
        println!("recorded {}: {} messages", case.name, transcript.len());
    }
    Ok(())
}
