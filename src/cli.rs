//! The `acplb` command line.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// acplb (ACPLazyBridge) serves the Agent Client Protocol (v1) on stdio and drives the OpenAI
/// Codex CLI as the coding agent. Editors (Zed, JetBrains, Neovim, acpx, ...) launch it with
/// no arguments.
#[derive(Debug, Parser)]
#[command(name = "acplb", version, about, long_about = None, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// The Codex binary (default: `$ACPLB_CODEX`, else `codex` on PATH).
    #[arg(long, env = "ACPLB_CODEX", value_name = "PATH", global = true)]
    pub codex: Option<PathBuf>,

    /// A Codex config override passed to every Codex run (repeatable), e.g. `-c model="gpt-5.5"`.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", global = true)]
    pub config: Vec<String>,

    /// Also write logs to this file (stderr always gets them, filtered by `RUST_LOG`).
    #[arg(long, env = "ACPLB_LOG_FILE", value_name = "PATH", global = true)]
    pub log_file: Option<PathBuf>,

    /// Write every turn's raw Codex stream (timed stdout/stderr lines, exit status) as JSONL
    /// under this folder, one file per turn: what `playback record` and bug reports use.
    #[arg(long, env = "ACPLB_TRANSCRIPT_DIR", value_name = "DIR", global = true)]
    pub transcript_dir: Option<PathBuf>,

    /// The plugin pipeline (default: `$ACPLB_COMPOSER`, else `composer.toml` in the session's
    /// workspace, else the user config dir).
    #[arg(long, env = "ACPLB_COMPOSER", value_name = "PATH", global = true)]
    pub composer: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve ACP on stdin/stdout (what editors run; the default).
    Serve,
    /// Check the Codex installation: where it is, its version, whether sandboxed commands run.
    Doctor,
}

const AFTER_HELP: &str = "\
Modes (session/set_mode): read-only (default: Codex reads, never writes), auto (edits and
commands inside the workspace sandbox), full-access (no sandbox).

Environment: CODEX_HOME and every other variable pass through to Codex; RUST_LOG sets the log
level (default warn on stderr). Stdout carries only the protocol.

Examples:
  acplb                         serve ACP on stdio (configure this command in your editor)
  acplb --codex ~/bin/codex     use a specific Codex binary
  acplb -c 'model=\"gpt-5.5\"'    pass a config override to Codex
  acplb doctor                  check the Codex installation";
