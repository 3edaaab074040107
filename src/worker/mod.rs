//! `acplb worker`: the daemon that runs Codex teammates (`run`, the default), and the
//! commands that talk to it (`status`, `send`, `restart`, `attach`). Each has a file of its own.

mod attach;
mod composer;
mod host;
mod run;
mod status;

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `acplb worker ...`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct WorkerArgs {
    #[command(subcommand)]
    command: Option<WorkerCommand>,
    #[command(flatten)]
    run: run::RunArgs,
}

/// The subcommands; none runs the daemon.
#[derive(Debug, Subcommand)]
enum WorkerCommand {
    /// Run the daemon in the foreground (what `acplb worker` alone does).
    Run(run::RunArgs),
    /// Show every worker of the running daemon: state, session, restarts, answers.
    Status(status::StatusArgs),
    /// Give a worker a message through its input queue: it becomes one turn.
    Send(SendArgs),
    /// Restart one worker (also what brings a `failed` one back).
    Restart {
        /// The agent, `name@team`.
        #[arg(value_name = "AGENT")]
        agent: String,
    },
    /// Follow a worker's session live, as `acplb sessions show` prints it.
    Attach {
        /// The agent, `name@team`.
        #[arg(value_name = "AGENT")]
        agent: String,
    },
}

/// Options of `acplb worker send`.
#[derive(Debug, Args)]
struct SendArgs {
    /// The agent, `name@team`.
    #[arg(value_name = "AGENT")]
    agent: String,
    /// The message.
    #[arg(value_name = "MESSAGE", allow_hyphen_values = true)]
    message: String,
    /// Who sends it (shown to the agent).
    #[arg(long, value_name = "NAME")]
    from: Option<String>,
}

/// The `--help` text after `acplb worker`'s own.
pub(crate) const HELP: &str = "\
The daemon runs one Codex teammate per enabled agent of its configuration
(--config PATH, else ~/.config/acplb/workers.toml). Each is an acplb session with the agent's team
identity (claimed exclusively: a name another live process holds is an error) and the
team-mail tools. Its inbox (<ATM_HOME|HOME>/.claude/teams/<team>/inboxes/<name>.json) is
watched: each unread message becomes a turn, and the turn's final answer is written to the
sender's inbox as the agent; the message is marked read only after that (at least once; a
reply is never written twice). A failed turn replies with the error. Mail from a sender who is
not a member of the agent's team (its config.json roster, or `atm members`) is marked read and
logged, never run, unless the agent sets accept_from_non_members = true (machine file only). In
prompt_template, {message} is the mail in its envelope (once), {from} and {summary} are escaped
onto one line; a template may be at most 16 KiB. A worker whose Codex dies
restarts with a doubling pause, at most max_restart_attempts times, then it is `failed` until
`acplb worker restart`. SIGHUP reloads the configuration (an invalid file is refused, the old
one stays); SIGTERM/SIGINT stop every worker within shutdown_timeout_secs, leaving
interrupted messages unread.

An agent whose own composer file (`composer = PATH`) sets `backend = \"atm-cli\"` on its
`atm-mail` plugin keeps its mail in ATM's daemon (ATM >= 1.2) instead: the worker runs `atm`
from PATH as the agent, polls `atm list` every 2 s, replies with `atm send` and marks a message
read with `atm read --message-id`. `atm send` takes no message id, so the worker records each reply in
its own ledger the moment it is sent (only a crash in that instant can repeat a reply); team
activity is not written to config.json there.

Example workers.toml:
  [workers]
  health_check_interval_secs = 30
  max_restart_attempts = 3
  restart_backoff_secs = 5

  [workers.agents.\"bob@myteam\"]
  cwd = \"/home/me/src/project\"
  concurrency_policy = \"queue\"     # queue | reject | concurrent
  prompt_template = \"{from} asks: {message}\"
  accept_from_non_members = false  # true: mail from outside the team runs too

Logs go to stderr and to one file per worker (<state dir>/workers/logs/<name@team>.log,
rotated at 10 MB, 5 kept).";

impl WorkerArgs {
    /// Whether this runs the daemon (which sets up its own logging).
    pub(crate) fn runs_daemon(&self) -> bool {
        matches!(self.command, None | Some(WorkerCommand::Run(_)))
    }
}

/// Runs `acplb worker ...`.
pub(crate) fn run(cli: &crate::cli::Cli, args: &WorkerArgs) -> anyhow::Result<bool> {
    match &args.command {
        None => run::run(cli, &args.run),
        Some(WorkerCommand::Run(run_args)) => run::run(cli, run_args),
        Some(WorkerCommand::Status(a)) => status::status(a),
        Some(WorkerCommand::Send(a)) => send(a),
        Some(WorkerCommand::Restart { agent }) => status::restart(agent),
        Some(WorkerCommand::Attach { agent }) => attach::attach(agent),
    }
}

fn send(args: &SendArgs) -> anyhow::Result<bool> {
    use std::io::Write as _;
    acplb_worker::config::AgentName::parse(&args.agent)
        .map_err(|e| anyhow::anyhow!("`{}`: {e}", args.agent))?;
    let state = crate::sessions::state_dir()?;
    let id = acplb_core::sessions::queue::send(&state, &args.agent, args.from.as_deref(), &args.message)?;
    writeln!(std::io::stdout().lock(), "{id}")?;
    Ok(true)
}

/// The configuration file: `--config`, else the default.
pub(crate) fn config_path(flag: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.clone());
    }
    acplb_worker::config::default_path(|k| std::env::var(k).ok()).ok_or_else(|| {
        anyhow::anyhow!("no configuration file: set HOME or XDG_CONFIG_HOME, or pass --config")
    })
}
