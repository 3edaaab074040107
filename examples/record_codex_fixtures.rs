//! Records the decoder's fixtures from the real Codex CLI against the project's mock model:
//! `cargo run --example record_codex_fixtures -- crates/acplb-codex/tests/fixtures`.
//!
//! Each fixture is the exact stdout of one `codex exec --json` run (`NAME.jsonl`) and its stderr
//! (`NAME.stderr`), with this machine's temporary paths replaced by `/workspace` and
//! `/codex-home`, and the home directory by `$HOME`, so the files are stable and hold no local
//! paths.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::Path;
use std::time::Duration;

use acplb_playback::mock_model::codex_env::CodexTestEnv;
use acplb_playback::mock_model::{MockConfig, MockModel};
use anyhow::Context as _;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};

const LIMIT: Duration = Duration::from_secs(90);
const RETRIES: [&str; 4] = [
    "-c",
    "model_providers.mock.request_max_retries=2",
    "-c",
    "model_providers.mock.stream_max_retries=2",
];

/// `(fixture name, arguments before the prompt, prompt)`.
fn cases() -> Vec<(&'static str, Vec<&'static str>, &'static str)> {
    let plan = vec!["-c", "tools.update_plan.enabled=true"];
    vec![
        ("plain", vec![], "scenario:plain Say hello"),
        ("shell", vec![], "scenario:shell List the files"),
        ("failing-command", vec![], "scenario:fail Run the failing command"),
        (
            "patch-workspace-write",
            vec!["-s", "workspace-write"],
            "scenario:patch Edit the files",
        ),
        ("patch-refused-read-only", vec![], "scenario:patch Edit the files"),
        (
            "patch-verification-failed",
            vec!["-s", "workspace-write"],
            "scenario:patch_missing Edit it",
        ),
        ("todo-list", plan, "scenario:plan Make a plan"),
        ("web-search", vec![], "scenario:websearch Search the web"),
        ("big-output", vec![], "scenario:bigoutput Print a lot"),
        (
            "escalation-refused",
            vec![],
            "scenario:escalate Run it outside the sandbox",
        ),
        (
            "escalation-declined-by-reviewer",
            vec!["--approve-for-me"],
            "scenario:escalate_deny Run it outside",
        ),
        ("http-401", vec![], "scenario:http401 hi"),
        ("http-429", vec![], "scenario:http429 hi"),
        ("http-500", vec![], "scenario:http500 hi"),
        ("http-500-with-retries", RETRIES.to_vec(), "scenario:http500 hi"),
        ("response-failed", vec![], "scenario:respfailed hi"),
        ("context-window", vec![], "scenario:ctxwindow hi"),
        ("truncated-stream", vec![], "scenario:truncated hi"),
        (
            "unknown-model-warning",
            vec!["-m", "mock-unknown-model"],
            "scenario:plain hi",
        ),
    ]
}

fn normalize(text: &str, env: &CodexTestEnv) -> String {
    let mut out = text.replace(&env.workspace().display().to_string(), "/workspace");
    out = out.replace(&env.home().display().to_string(), "/codex-home");
    out = out.replace(&env.root().display().to_string(), "/codex-test");
    // Login-shell noise such as "pyenv: cannot rehash: <home>/.pyenv/shims" names the home.
    match std::env::var("HOME") {
        Ok(home) if home.len() > 1 => out.replace(&format!("{home}/"), "$HOME/"),
        _ => out,
    }
}

fn write(dir: &Path, name: &str, stdout: &str, stderr: &str, env: &CodexTestEnv) -> anyhow::Result<()> {
    std::fs::write(dir.join(format!("{name}.jsonl")), normalize(stdout, env))?;
    std::fs::write(dir.join(format!("{name}.stderr")), normalize(stderr, env))?;
    println!("recorded {name}: {} lines", stdout.lines().count());
    Ok(())
}

/// A `sleep 30` command interrupted with SIGINT once it has started, as a cancel does.
async fn record_cancel(dir: &Path, env: &CodexTestEnv) -> anyhow::Result<()> {
    let mut child = env.exec_command(["scenario:sleep Wait"]).spawn()?;
    let pid = child.id().context("pid")?;
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().context("stdout")?).lines();
    let mut stderr_pipe = child.stderr.take().context("stderr")?;
    let mut out = String::new();
    while let Some(line) = tokio::time::timeout(LIMIT, stdout.next_line()).await?? {
        out.push_str(&line);
        out.push('\n');
        if line.contains("\"item.started\"") && line.contains("sleep 30") {
            let pid = nix::unistd::Pid::from_raw(i32::try_from(pid)?);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT)?;
        }
    }
    let mut err = String::new();
    stderr_pipe.read_to_string(&mut err).await?;
    child.wait().await?;
    write(dir, "cancel-sigint", &out, &err, env)
}

/// Three turns of one thread: the first run, then `exec resume <thread id>` twice.
async fn record_resume(dir: &Path, env: &CodexTestEnv) -> anyhow::Result<()> {
    let first = env.run_exec(["scenario:history turn one"], LIMIT).await?;
    write(dir, "resume-turn-1", &first.stdout, &first.stderr, env)?;
    let thread = first.thread_id().context("no thread id")?.to_owned();
    for n in 2..=3 {
        let run = env
            .run_exec(["resume", thread.as_str(), "scenario:history next turn"], LIMIT)
            .await?;
        write(dir, &format!("resume-turn-{n}"), &run.stdout, &run.stderr, env)?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .context("usage: record_codex_fixtures OUT_DIR")?;
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir)?;
    let mock = MockModel::start(MockConfig::default())?;
    for (name, args, prompt) in cases() {
        // A fresh workspace per case: patches must find the files as the scenario expects.
        let env = CodexTestEnv::new(mock.base_url())?;
        let mut all = args.clone();
        all.push(prompt);
        let run = env
            .run_exec(all, LIMIT)
            .await
            .with_context(|| format!("recording {name}"))?;
        write(dir, name, &run.stdout, &run.stderr, &env)?;
    }
    let env = CodexTestEnv::new(mock.base_url())?;
    record_resume(dir, &env).await?;
    record_cancel(dir, &env).await?;
    Ok(())
}
