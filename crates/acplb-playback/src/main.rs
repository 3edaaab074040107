//! The `playback` binary: tools for recording, replaying and checking acplb sessions (today: `mock-model`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, MockModel, Script};
use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "playback", version, about = "Record, replay and check acplb sessions")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a scripted mock of the Responses API (the model API Codex calls) on 127.0.0.1.
    MockModel(MockModelArgs),
}

#[derive(Debug, Args)]
struct MockModelArgs {
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// A TOML (or .json) script whose scenarios are layered over the built-in ones.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Append every request as a JSON line to this file.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Pause between SSE events, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Exit after this many seconds (default: run until Ctrl-C).
    #[arg(long, value_name = "SECS")]
    lifetime: Option<u64>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::MockModel(args) => mock_model(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            report(&format!("playback: {error:#}"));
            ExitCode::from(2)
        }
    }
}

fn mock_model(args: MockModelArgs) -> anyhow::Result<()> {
    let mut script = Script::builtin();
    if let Some(path) = &args.script {
        script = script.layered_with(Script::load(path)?);
    }
    let mut config = MockConfig::default()
        .with_port(args.port)
        .with_script(script)
        .with_delay(Duration::from_millis(args.delay_ms));
    if let Some(log) = args.log {
        config = config.with_log_file(log);
    }
    let handle = MockModel::start(config)?;
    report(&format!("listening on {}", handle.base_url()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to build the signal runtime")?;
    runtime.block_on(async {
        let lifetime = async {
            match args.lifetime {
                Some(secs) => tokio::time::sleep(Duration::from_secs(secs)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            signal = tokio::signal::ctrl_c() => signal.context("failed to wait for Ctrl-C"),
            () = lifetime => Ok(()),
        }
    })?;
    handle.shutdown();
    Ok(())
}

/// The binary's own lines go to stderr: stdout stays free for a protocol, as everywhere in acplb.
#[allow(clippy::print_stderr, reason = "the user-facing status line of a binary")]
fn report(line: &str) {
    eprintln!("{line}");
}
