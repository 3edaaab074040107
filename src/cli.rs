//! The `acplb` command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// acplb (ACPLazyBridge) serves the Agent Client Protocol (v1) on stdio and drives the OpenAI
/// Codex CLI as the coding agent. Editors (Zed, JetBrains, Neovim, acpx, ...) launch it with
/// no arguments.
#[derive(Debug, Parser)]
#[command(name = "acplb", version, about, long_about = None, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// The Codex binary (default: `$ACPLB_CODEX`, else `codex` on PATH).
    #[arg(
        long,
        env = "ACPLB_CODEX",
        value_name = "PATH",
        global = true,
        help_heading = "Global options"
    )]
    pub codex: Option<PathBuf>,

    /// A Codex config override passed to every Codex run (repeatable), e.g. `-c model="gpt-5.5"`.
    #[arg(
        short = 'c',
        long = "config",
        value_name = "KEY=VALUE",
        global = true,
        help_heading = "Global options"
    )]
    pub config: Vec<String>,

    /// Also write logs to this file (stderr always gets them, filtered by `RUST_LOG`).
    #[arg(
        long,
        env = "ACPLB_LOG_FILE",
        value_name = "PATH",
        global = true,
        help_heading = "Global options"
    )]
    pub log_file: Option<PathBuf>,

    /// Write every turn's raw Codex stream (timed stdout/stderr lines, exit status) as JSONL
    /// under this folder, one file per turn: what `playback record` and bug reports use.
    #[arg(
        long,
        env = "ACPLB_TRANSCRIPT_DIR",
        value_name = "DIR",
        global = true,
        help_heading = "Global options"
    )]
    pub transcript_dir: Option<PathBuf>,

    /// The longest one turn may run, e.g. `90s`, `30m`, `1h 30m`; `0` for no limit. A turn that
    /// hits it is stopped (Codex and its commands are killed, as on cancel) and the prompt gets
    /// an error saying so; what the turn produced until then stays in the editor.
    #[arg(
        long,
        env = "ACPLB_TURN_TIMEOUT",
        value_name = "DURATION",
        default_value = crate::turn_timeout::DEFAULT,
        value_parser = crate::turn_timeout::parse,
        global = true,
        help_heading = "Global options"
    )]
    pub turn_timeout: crate::turn_timeout::TurnTimeout,

    /// The most output, in MiB, that acplb holds for an editor that reads slowly (updates and
    /// permission requests written to stdout but not yet read); past it Codex is paused until
    /// the editor catches up.
    #[arg(
        long,
        env = "ACPLB_OUTPUT_BUFFER",
        value_name = "MIB",
        default_value_t = 64,
        value_parser = clap::value_parser!(u32).range(1..=4096),
        global = true,
        help_heading = "Global options"
    )]
    pub output_buffer: u32,

    /// How acplb runs Codex: `app-server` (the default: one long-lived `codex app-server` shared
    /// by all sessions; text and command output stream live, Codex asks before edits and
    /// commands outside the mode's sandbox, prompts can steer a running turn) or `exec` (one
    /// `codex exec --json` per prompt: output arrives when each step completes, Codex never asks;
    /// for a Codex without app-server). Else `transport = "..."` in
    /// `~/.config/acplb/config.toml`. An empty value (`ACPLB_TRANSPORT=`) is the same as none.
    #[arg(
        long,
        env = "ACPLB_TRANSPORT",
        value_name = "TRANSPORT",
        value_parser = parse_transport,
        global = true,
        help_heading = "Global options"
    )]
    pub transport: Option<TransportArg>,

    /// A preset from `[roles.NAME]` in acplb's config.toml (model, effort, sandbox,
    /// approval_policy, developer_instructions), for `serve` and `mcp codex`.
    #[arg(long, value_name = "NAME", global = true, help_heading = "Global options")]
    pub role: Option<String>,

    /// The plugin pipeline, `composer.toml` (default: `$ACPLB_COMPOSER`, else `composer.toml`
    /// in the session's workspace, else `~/.config/acplb/composer.toml`). A file named here or in
    /// `$ACPLB_COMPOSER` is checked at startup: an error stops acplb.
    // `$ACPLB_COMPOSER` is read by `pipelines::explicit_source`, not by clap, so `config check`
    // can say which of the two named the file.
    #[arg(long, value_name = "PATH", global = true, help_heading = "Global options")]
    pub composer: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--transport` / `ACPLB_TRANSPORT` as given: `None` for an empty value, which names no
/// transport (an editor's `"env": {"ACPLB_TRANSPORT": ""}`, a profile's `export ACPLB_TRANSPORT=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TransportArg(pub(crate) Option<acplb_codex::Transport>);

fn parse_transport(s: &str) -> Result<TransportArg, String> {
    if s.trim().is_empty() {
        return Ok(TransportArg(None));
    }
    s.parse().map(|t| TransportArg(Some(t)))
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve ACP on stdin/stdout (what editors run; the default).
    Serve,
    /// Check the Codex installation: where it is, its version, whether it is logged in, whether
    /// sandboxed commands run. Exits 1 when Codex cannot be used.
    Doctor(DoctorArgs),
    /// Inspect acplb's configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Sign Codex in, in this terminal: runs `codex login` with these arguments (for example
    /// `--device-auth` over SSH) and the global `-c` overrides. Editors with terminal sign-in
    /// run it for you.
    Login {
        /// Arguments for `codex login`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
        args: Vec<std::ffi::OsString>,
    },
    /// Internal: started by `acplb serve`; kills what that acplb's children left once it is gone.
    #[command(hide = true)]
    ExitGuard {
        /// The acplb process to guard.
        #[arg(long)]
        pid: u32,
    },
    /// Trust a workspace (default: the current directory), so that sessions there run its own
    /// composer.toml; or list the trusted workspaces.
    #[command(after_help = TRUST_HELP)]
    Trust(TrustArgs),
    /// Stop trusting a workspace: its composer.toml is ignored again from the next session on.
    Untrust {
        /// The workspace.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// The sessions acplb keeps (so editors can load and resume them): list them, prune old ones.
    #[command(subcommand, after_help = crate::sessions::HELP)]
    Sessions(crate::sessions::SessionsCommand),
    /// Send a message to a session or a worker through its input queue, or list what waits.
    #[command(subcommand, after_help = crate::queue::HELP)]
    Queue(crate::queue::QueueCommand),
    /// Run Codex teammates that answer their team mail on their own (the daemon, in the
    /// foreground), or ask the running daemon: `status`, `send`, `restart`, `attach`.
    #[command(after_help = crate::worker::HELP)]
    Worker(crate::worker::WorkerArgs),
    /// Run one of acplb's MCP servers on stdio (the `atm-mail` plugin registers it for Codex).
    #[command(subcommand)]
    Mcp(McpCommand),
}

/// Options of `acplb doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// How long each call to Codex may take before it is stopped and reported as timed out.
    #[arg(long, value_name = "SECONDS", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Show the plugin pipeline a session would get: which composer.toml, its plugins in order,
    /// and every value with where it came from; or the error (file, line, hint), exiting 1.
    #[command(after_help = CONFIG_CHECK_HELP)]
    Check {
        /// The session workspace to check for (default: the current directory); it decides
        /// which `composer.toml` and `.atm.toml` are found.
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
    },
}

/// Options of `acplb trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The workspace to trust (default: the current directory).
    #[arg(value_name = "DIR", conflicts_with = "list")]
    pub dir: Option<PathBuf>,

    /// List the trusted workspaces, one per line.
    #[arg(long)]
    pub list: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Agent-team mail tools (atm_send, atm_read, atm_broadcast, atm_pending_count) for one
    /// identity, over stdio. Honours `ATM_HOME` (else `HOME`): inboxes are under
    /// `<ATM_HOME>/.claude/teams/<team>/inboxes/`.
    Atm(AtmArgs),
    /// Codex as MCP tools (`codex`, `codex-reply`, `codex_threads`, `codex_status`; the team-mail
    /// tools too when the composer enables team mail), over stdio: a drop-in for the
    /// `codex mcp-server` Codex 0.154 removed. Each call is an acplb session. For Claude Code:
    /// `claude mcp add codex -- acplb mcp codex`.
    Codex(CodexArgs),
    /// Starts a client's stdio MCP server with the environment acplb handed over through Codex
    /// (acplb registers this itself; see `mcp_launch.rs`).
    #[command(hide = true)]
    Launch(LaunchArgs),
}

/// Options of `acplb mcp codex`.
#[derive(Debug, Args)]
pub(crate) struct CodexArgs {
    /// The longest one `codex` / `codex-reply` call may run before its turn is stopped and the
    /// call answers with an error naming the limit (else `request_timeout_secs` in acplb's
    /// config.toml, else 300).
    #[arg(long, value_name = "SECONDS", env = "ACPLB_REQUEST_TIMEOUT", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub request_timeout: Option<u64>,

    /// The identity whose threads `codex_threads` lists and `codex_status` shows (else
    /// resolved as the team-mail plugins do: `ATM_IDENTITY`, `.atm.toml`).
    #[arg(long, value_name = "NAME")]
    pub identity: Option<String>,

    /// The first `codex` call continues THREAD, or without a value this identity's most
    /// recent thread, with its saved shutdown summary put before the prompt.
    #[arg(long, value_name = "THREAD", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// Append every `codex` / `codex-reply` call (thread and the first 200 characters of the
    /// prompt, redacted) to this JSON-lines audit log.
    #[arg(long, value_name = "FILE")]
    pub audit: Option<PathBuf>,
}

/// Options of `acplb mcp launch`.
#[derive(Debug, Args)]
pub(crate) struct LaunchArgs {
    /// Sets `NAME` for the server to the value of the variable `VAR`, and removes `VAR`.
    #[arg(long = "env", value_name = "NAME=VAR")]
    pub env: Vec<String>,

    /// The server's program and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<std::ffi::OsString>,
}

/// Options of `acplb mcp atm`.
#[derive(Debug, Args)]
pub(crate) struct AtmArgs {
    /// The sender identity (else `ATM_IDENTITY`, else `.atm.toml` `[core] identity`, else `codex`).
    #[arg(long, value_name = "NAME")]
    pub identity: Option<String>,

    /// The team (else `ATM_TEAM`, else `.atm.toml` `[core] default_team`, else `default`).
    #[arg(long, value_name = "TEAM")]
    pub team: Option<String>,

    /// Where mail lives: Claude Code's team inbox files, or the `atm` CLI (ATM >= 1.2).
    #[arg(long, value_enum, default_value_t = MailBackendArg::Files)]
    pub backend: MailBackendArg,

    /// Append every tool call to this JSONL audit log (secrets redacted).
    #[arg(long, value_name = "PATH")]
    pub audit: Option<PathBuf>,

    /// The most messages one `atm_read` returns.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_messages: u32,

    /// Each message `atm_read` returns is cut to this many characters.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_message_length: u32,

    /// Do not claim the identity lock: the acplb session that registered this server already
    /// holds it (set by the `atm-mail` plugin after `atm-identity`).
    #[arg(long)]
    pub no_claim: bool,
}

/// `--backend` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MailBackendArg {
    /// Claude Code's team inbox files (interoperates with Claude Code and ATM <= 1.1).
    Files,
    /// The `atm` CLI, for ATM >= 1.2 whose mail lives in its daemon.
    AtmCli,
}

const AFTER_HELP: &str = "\
Modes (session/set_mode): read-only (default: Codex reads; on app-server it asks before edits
and anything more), auto (edits and commands inside the workspace sandbox; asks before anything
outside it), full-access (no sandbox, never asks), plan (app-server only: Codex plans and asks
questions, edits nothing; switching to another mode carries the plan out). On exec Codex never
asks: what the sandbox refuses fails.

Plugins: a composer.toml lists plugins (atm-identity, atm-mail, audit) run for every session;
see composer.toml.example and `acplb config check`. A workspace's own composer.toml runs only
once you trust that workspace (`acplb trust DIR`).

Environment: CODEX_HOME and every other variable pass through to Codex; RUST_LOG sets the log
level (`debug`, or per target: `acplb_core=debug,warn`; default warn on stderr; coloured only on a terminal, never with NO_COLOR set). Stdout
carries only the protocol.

Examples:
  acplb                         serve ACP on stdio (configure this command in your editor)
  acplb --codex ~/bin/codex     use a specific Codex binary
  acplb -c 'model=\"gpt-5.5\"'    pass a config override to Codex
  acplb doctor                  check the Codex installation and login
  acplb config check            show the plugin pipeline and where each value comes from
  acplb sessions list           the sessions acplb keeps, newest first";

const TRUST_HELP: &str = "\
A composer.toml inside a workspace is repository content: acplb ignores it (and tells the
editor so) until you trust the workspace. Trust is per directory, exact (not the directories
below it), and kept in $XDG_CONFIG_HOME/acplb/trusted.toml (else ~/.config/acplb/trusted.toml).
Even when trusted, its paths may only lead into the workspace or acplb's state directory.

Examples:
  acplb trust                   trust the current directory
  acplb trust ~/src/project
  acplb trust --list
  acplb untrust ~/src/project";

const CONFIG_CHECK_HELP: &str = "\
Origins: `FILE:LINE` (a composer.toml value), `env ATM_IDENTITY` (and other variables),
`.atm.toml (PATH)`, `default`.

Examples:
  acplb config check
  acplb config check --composer team.toml
  ACPLB_COMPOSER=team.toml acplb config check --workspace ~/src/project";
