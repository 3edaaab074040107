//! The `playback` binary: record, replay, check and decode acplb sessions; serve the mock model
//! and a tiny MCP server; and, when started as `codex`, stand in for Codex during a replay.

mod as_codex;
mod commands;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[derive(Debug, Parser)]
#[command(name = "playback", version, about = "Record, replay and check acplb sessions")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sit between an ACP client (this process's stdin/stdout) and a live acplb, pass bytes
    /// through unchanged, and write the session as a scenario when the client disconnects.
    Record(RecordArgs),
    /// Replay a scenario through the real acplb, with playback standing in for Codex; print
    /// acplb's normalized output.
    Run(RunArgs),
    /// Replay scenarios and compare with their expected output (unified diff on mismatch).
    Check(CheckArgs),
    /// Print the ACP notifications a Codex stream (`codex exec --json` stdout, or an acplb
    /// transcript) produces, plus turn signals; no client, no Codex.
    Decode(DecodeArgs),
    /// Serve a scripted mock of the Responses API (the model API Codex calls) on 127.0.0.1.
    MockModel(MockModelArgs),
    /// Serve a tiny MCP server on stdio with tools `echo` and `fail`.
    McpEcho,
    /// Record the scenario corpus from the real Codex CLI against the mock model.
    RecordCorpus(CorpusArgs),
}

#[derive(Debug, Args)]
struct RecordArgs {
    /// The scenario file to write.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// The scenario's name (default: the file stem).
    #[arg(long)]
    name: Option<String>,
    /// The scenario's description.
    #[arg(long, default_value = "")]
    description: String,
    /// The acplb command line, e.g. `-- target/debug/acplb -c model="gpt-5.5"`.
    #[arg(last = true, required = true, value_name = "ACPLB COMMAND")]
    command: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SpeedArg {
    /// No delays (the order of Codex's lines is kept).
    Max,
    /// The recorded delays.
    Real,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The acplb binary (default: `$ACPLB_BIN`, else next to playback, else on PATH).
    #[arg(long, value_name = "PATH")]
    acplb: Option<PathBuf>,
    /// Longest wait for one response or for acplb's exit, in seconds.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    timeout: u64,
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The scenario file.
    file: PathBuf,
    /// How fast the stand-in prints Codex's lines.
    #[arg(long, value_enum, default_value = "max")]
    speed: SpeedArg,
    #[command(flatten)]
    replay: ReplayArgs,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// Scenario files, or directories of `*.toml` scenarios.
    #[arg(required = true, value_name = "FILE|DIR")]
    paths: Vec<PathBuf>,
    /// Rewrite each scenario's expected output with what the replay produced.
    #[arg(long)]
    bless: bool,
    /// Scenarios replayed at once (default: the number of CPUs).
    #[arg(long, short)]
    jobs: Option<usize>,
    #[command(flatten)]
    replay: ReplayArgs,
}

#[derive(Debug, Args)]
struct DecodeArgs {
    /// A `codex exec --json` stdout capture, or an acplb transcript (`turn-N.jsonl`).
    file: PathBuf,
    /// The session's workspace (default: the transcript's, else the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Decode for a client that shows `notice` updates.
    #[arg(long)]
    notices: bool,
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

#[derive(Debug, Args)]
struct CorpusArgs {
    /// Where the scenario files go.
    #[arg(long, default_value = "_artifacts/tests/scenarios", value_name = "DIR")]
    out: PathBuf,
    /// Record only this scenario (repeatable).
    #[arg(long, value_name = "NAME")]
    only: Vec<String>,
    /// Record only the scenarios of this transport (`exec` or `app-server`).
    #[arg(long, value_name = "TRANSPORT")]
    transport: Option<String>,
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
    /// The acplb binary (default: `$ACPLB_BIN`, else next to playback, else on PATH).
    #[arg(long, value_name = "PATH")]
    acplb: Option<PathBuf>,
    /// The real Codex binary (default: `$ACPLB_CODEX_TEST_BIN`, else the pinned install).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
}

fn main() -> ExitCode {
    if let Some(code) = as_codex::run_if_codex() {
        return code;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::TRACE)
        .finish()
        .with(acplb_core::telemetry::log_filter("error"))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Record(args) => commands::record(args),
        Command::Run(args) => commands::run(&args),
        Command::Check(args) => commands::check(&args),
        Command::Decode(args) => commands::decode(args),
        Command::MockModel(args) => commands::mock_model(args).map(|()| ExitCode::SUCCESS),
        Command::McpEcho => commands::mcp_echo(),
        Command::RecordCorpus(args) => commands::record_corpus(args),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            commands::report(&format!("playback: {error:#}"));
            ExitCode::from(2)
        }
    }
}
