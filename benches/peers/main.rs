//! `scripts/bench-peers` (`cargo bench --bench peers -- [options]`): acplb beside the TypeScript
//! codex-acp 2.6.0, both driving the real Codex CLI against the project's mock model.
//!
//! Scenarios run one after the other and, within one, agents alternate (the order rotates every
//! pair, so each agent's runs follow each other agent's as often), each run launching the agent, opening a session,
//! waiting 1 s as a user would, and sending one prompt of the mock scenario `plain` or `shell`. It
//! prints, per agent and scenario, the medians of: launch → `session/new` reply, prompt → first
//! `agent_message_chunk`, prompt → `session/prompt` response (and of it: prompt → the first model
//! request the mock received, and the last model request → the response; what lies between is
//! Codex's alone), and the agent process's own peak RSS (`VmHWM`, children excluded); then the
//! medians of the pairwise ratios to the baseline agent and the targets. Agents get
//! an empty `HOME`, and run in the `read-only` mode. Each agent has its own `CODEX_HOME` and
//! workspace, made alike, so that what one agent's run leaves there cannot slow another agent's run.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark binary: the report goes to stdout, progress to stderr"
)]

mod agent;
mod report;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acplb_playback::mock_model::codex_env::{CODEX_VERSION, CodexTestEnv, codex_binary};
use acplb_playback::mock_model::{MockConfig, MockModel};
use anyhow::{Context as _, bail};
use clap::Parser;
use serde_json::json;

use agent::{AgentKind, AgentSpec, Launcher};
use report::{Record, Report};
use run::{Pacing, Scenario};

/// acplb beside the TypeScript codex-acp, with the real Codex and the mock model.
#[derive(Debug, Parser)]
#[command(name = "bench-peers")]
struct Args {
    /// Measured pairs (each agent runs every scenario once per pair).
    #[arg(long, default_value_t = 10)]
    pairs: usize,
    /// Pairs run first and not counted (Codex's first start reads its binary from disk).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// The agents, comma-separated: `ts`, `acplb` (its default transport) or `acplb-<transport>`
    /// (sets `ACPLB_TRANSPORT`), e.g. `acplb-exec,acplb-app-server,ts`.
    #[arg(long, value_delimiter = ',', default_value = "acplb,ts")]
    agents: Vec<AgentSpec>,
    /// The agent the ratios are taken against (default: `ts` if it runs, else the first).
    #[arg(long)]
    baseline: Option<String>,
    /// The mock scenarios measured.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "plain,shell")]
    scenarios: Vec<Scenario>,
    /// Pause between the `session/new` reply and the prompt, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    think_ms: u64,
    /// Limit on one run, in seconds.
    #[arg(long, default_value_t = 120)]
    timeout_secs: u64,
    /// The acplb binary (default: the one cargo built for this bench).
    #[arg(long)]
    acplb: Option<PathBuf>,
    /// The TS codex-acp entry point, `dist/index.js` (default: where
    /// `scripts/install-test-deps --with-ts-peer` installs it).
    #[arg(long)]
    ts_peer: Option<PathBuf>,
    /// The node binary that runs the TS peer.
    #[arg(long, default_value = "node")]
    node: PathBuf,
    /// Print the report as JSON on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Passed by `cargo bench`; without it (`cargo test --benches`) nothing is measured.
    #[arg(long, hide = true)]
    bench: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if !args.bench {
        eprintln!("peers: measures only under `cargo bench --bench peers` (see scripts/bench-peers)");
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    match runtime
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(bench(&args)))
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-peers: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn bench(args: &Args) -> anyhow::Result<()> {
    let agents = &args.agents;
    if agents.is_empty() || args.pairs == 0 {
        bail!("nothing to measure: give at least one agent and one pair");
    }
    let baseline = match &args.baseline {
        Some(name) => agents
            .iter()
            .position(|a| &a.name == name)
            .with_context(|| format!("--baseline `{name}` is not one of --agents"))?,
        None => agents.iter().position(|a| a.name == "ts").unwrap_or(0),
    };
    let ts_peer = match &args.ts_peer {
        Some(path) => path.clone(),
        None => agent::default_ts_peer()?,
    };
    if agents.iter().any(|a| a.kind == AgentKind::Ts) {
        agent::check_ts_peer(&ts_peer)?;
    }
    let acplb = args
        .acplb
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_acplb")));
    let transport_flag = agent::acplb_has_transport(&acplb);
    if !transport_flag
        && agents
            .iter()
            .any(|a| matches!(&a.kind, AgentKind::Acplb { transport: Some(_) }))
    {
        eprintln!(
            "bench-peers: warning: this acplb has no --transport; ACPLB_TRANSPORT is ignored and every acplb agent runs its default transport"
        );
    }
    let mock = MockModel::start(MockConfig::default()).context("failed to start the mock model")?;
    // One Codex home and workspace per agent, alike but apart: what one agent's run leaves behind
    // (a Codex killed mid-write, its state database to recover) must not slow the next agent's run.
    let codex = codex_binary()?;
    let mut homes = Vec::with_capacity(agents.len());
    for _ in agents {
        let env = CodexTestEnv::builder(mock.base_url())
            .codex(codex.clone())
            .build()?;
        let launcher = Launcher {
            acplb: acplb.clone(),
            node: args.node.clone(),
            ts_peer: ts_peer.clone(),
            codex: env.codex_path().to_path_buf(),
            workspace: env.workspace(),
            codex_env: clean_home(&env)?,
            home_marker: format!("CODEX_HOME={}", env.home().display()),
        };
        homes.push((env, launcher));
    }
    let pacing = Pacing {
        think: Duration::from_millis(args.think_ms),
        timeout: Duration::from_secs(args.timeout_secs),
    };
    let mut records = Vec::new();
    let total = args.warmup + args.pairs;
    // One scenario after the other, the agents' order rotating every pair: so that no agent
    // always runs first, and each agent's runs follow each other agent's as often (a run slows
    // the next one a little, more after the TS peer: alternating scenarios in one loop made
    // acplb's shell runs always follow the TS peer's).
    for &scenario in &args.scenarios {
        for round in 0..total {
            let counted = round.checked_sub(args.warmup);
            for k in 0..agents.len() {
                let a = (k + round) % agents.len();
                let launcher = &homes[a].1;
                let mut sample = run::measure(launcher, &agents[a], scenario, pacing).await?;
                sample.model_requests = run::model_requests(&sample, &mock.requests());
                progress(counted, scenario, &agents[a].name, &sample);
                if let Some(pair) = counted {
                    records.push(Record {
                        pair,
                        scenario,
                        agent: a,
                        sample,
                    });
                }
            }
        }
    }
    let report = Report {
        agents,
        baseline,
        scenarios: &args.scenarios,
        records: &records,
        setup: setup(args, &homes[0].1, transport_flag, &records),
    };
    if args.json {
        println!("{:#}", report.json());
    } else {
        print!("{}", report.text());
    }
    Ok(())
}

/// One run's figures on stderr, as the runs go.
fn progress(counted: Option<usize>, scenario: Scenario, agent: &str, sample: &run::Sample) {
    eprintln!(
        "{} {:<5} {:<18} launch {:>7.1} ms  first chunk {:>7.1} ms  end {:>7.1} ms  rss {:>6} KiB  chunks {:>3}  {}{}",
        counted.map_or_else(|| "warm-up".to_owned(), |p| format!("pair {p:>2}")),
        scenario.name(),
        agent,
        sample.launch.as_secs_f64() * 1e3,
        sample.first_chunk.as_secs_f64() * 1e3,
        sample.end_of_turn.as_secs_f64() * 1e3,
        sample.peak_rss_kib,
        sample.chunks,
        run::timeline(sample),
        if sample.left_behind.is_empty() {
            String::new()
        } else {
            format!("  left behind, killed: {:?}", sample.left_behind)
        },
    );
}

/// [`CodexTestEnv::env_vars`] plus `HOME`, an empty directory beside the workspace: each command
/// Codex runs is a login shell (`bash -lc`), and the shell snapshot Codex takes is one too, so with
/// the user's home they would source the user's own profile (a `pyenv init` there cost 120-170 ms
/// per command on this project's machine, and the TS peer's leftover `pyenv rehash` processes, once
/// killed, left a stale lock that stalled every later login shell). The figures are the bridges',
/// not the machine's dotfiles', and the user's home is left alone.
fn clean_home(env: &CodexTestEnv) -> anyhow::Result<Vec<(std::ffi::OsString, std::ffi::OsString)>> {
    let home = env.workspace().with_file_name("user-home");
    std::fs::create_dir_all(&home).with_context(|| format!("failed to create {}", home.display()))?;
    let mut vars = env.env_vars();
    vars.push(("HOME".into(), home.into()));
    Ok(vars)
}

/// The facts a reader needs to reproduce the figures.
fn setup(
    args: &Args,
    launcher: &Launcher,
    transport_flag: bool,
    records: &[Record],
) -> Vec<(String, serde_json::Value)> {
    let left_behind: serde_json::Map<_, _> = args
        .agents
        .iter()
        .enumerate()
        .map(|(a, spec)| {
            let n: usize = records
                .iter()
                .filter(|r| r.agent == a)
                .map(|r| r.sample.left_behind.len())
                .sum();
            (spec.name.clone(), json!(n))
        })
        .collect();
    vec![
        ("pairs".into(), json!(args.pairs)),
        ("warmup_pairs".into(), json!(args.warmup)),
        ("prompt_after_session_new_ms".into(), json!(args.think_ms)),
        (
            "codex".into(),
            json!(format!("{CODEX_VERSION} at {}", launcher.codex.display())),
        ),
        ("acplb".into(), json!(launcher.acplb.display().to_string())),
        ("acplb_takes_transport".into(), json!(transport_flag)),
        (
            "ts".into(),
            json!(format!(
                "codex-acp {} at {}, run with {}",
                agent::TS_PEER_VERSION,
                launcher.ts_peer.display(),
                launcher.node.display()
            )),
        ),
        (
            "mode".into(),
            json!(format!(
                "{} for every agent (acplb's default; the TS peer via INITIAL_AGENT_MODE, its own default is `agent`)",
                agent::MODE
            )),
        ),
        (
            "home".into(),
            json!("an empty directory for every agent (no user profile in Codex's login shells)"),
        ),
        (
            "codex_home".into(),
            json!("one per agent, with the same config.toml and workspace files"),
        ),
        ("left_behind_1s_after_exit_killed".into(), json!(left_behind)),
    ]
}
