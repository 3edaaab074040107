//! `acplb`: serve the Agent Client Protocol over the OpenAI Codex CLI.
#![deny(clippy::print_stdout)]
#![allow(
    clippy::doc_markdown,
    reason = "doc comments here are clap help text, shown to users as written"
)]

mod cli;
mod codex_path;
mod config_check;
mod doctor;
mod login;
mod mcp;
mod mcp_codex;
mod mcp_launch;
mod pipelines;
mod queue;
mod roles;
mod serve;
mod sessions;
mod settings;
mod stop_flag;
mod table;
mod trust;
mod turn_timeout;
mod worker;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    acplb_core::telemetry::install_panic_hook();
    let cli = cli::Cli::parse();
    // The worker daemon sets up its own logging once it knows where its workers' files go.
    let daemon = matches!(cli.command, Some(cli::Command::Worker(ref w)) if w.runs_daemon());
    let _guard = match (!daemon)
        .then(|| acplb_core::telemetry::init(cli.log_file.as_deref()))
        .transpose()
    {
        Ok(g) => g,
        Err(e) => {
            #[expect(
                clippy::print_stderr,
                reason = "logging is not set up, so this is the only way to say why"
            )]
            {
                eprintln!("acplb: {e:#}");
            }
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        None | Some(cli::Command::Serve) => serve::run(&cli).map(|()| true),
        Some(cli::Command::Doctor(ref args)) => doctor::run(&cli, args),
        Some(cli::Command::Login { ref args }) => login::run(&cli, args),
        Some(cli::Command::Config(cli::ConfigCommand::Check { ref workspace })) => {
            config_check::run(&cli, workspace.as_deref())
        }
        Some(cli::Command::Mcp(cli::McpCommand::Atm(ref args))) => mcp::run_atm(args).map(|()| true),
        Some(cli::Command::Mcp(cli::McpCommand::Codex(ref args))) => {
            mcp_codex::run(&cli, args).map(|()| true)
        }
        Some(cli::Command::ExitGuard { pid }) => {
            let killed = acplb_core::transport::run_exit_guard(pid);
            if killed > 0 {
                tracing::info!(killed, "killed processes a stopped acplb left behind");
            }
            Ok(true)
        }
        Some(cli::Command::Mcp(cli::McpCommand::Launch(ref args))) => mcp_launch::run(args),
        Some(cli::Command::Trust(ref args)) => trust::trust(args),
        Some(cli::Command::Untrust { ref dir }) => trust::untrust(dir),
        Some(cli::Command::Sessions(ref command)) => sessions::run(command),
        Some(cli::Command::Queue(ref command)) => queue::run(command),
        Some(cli::Command::Worker(ref args)) => worker::run(&cli, args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            #[expect(
                clippy::print_stderr,
                reason = "the error must reach the user even with RUST_LOG=off"
            )]
            {
                eprintln!("acplb: {e:#}");
            }
            ExitCode::from(2)
        }
    }
}
