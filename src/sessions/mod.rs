//! `acplb sessions`: the sessions acplb keeps in its state directory: `list` shows them,
//! `show` and `summary` one of them, `prune` deletes old ones, `delete` one. Each subcommand is a variant of [`SessionsCommand`] with its
//! arguments and code in a file of its own.

mod delete;
mod list;
mod prune;
pub(crate) mod show;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::bail;
use clap::Subcommand;

/// `acplb sessions ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// List sessions, newest first: id, status, when each was last active, its working directory
    /// and title. An `active` or `idle` session whose acplb is gone shows as `interrupted` (in
    /// `--json` too).
    #[command(after_help = list::HELP)]
    List(list::ListArgs),
    /// Delete sessions last active longer ago than `--older-than` (their journal, summary and
    /// registry entry), and session folders the registry no longer knows. A session a running
    /// acplb has open is never deleted.
    #[command(after_help = prune::HELP)]
    Prune(prune::PruneArgs),
    /// Show one session as readable text, the way the editor showed it.
    #[command(after_help = show::SHOW_HELP)]
    Show(show::ShowArgs),
    /// Print a session's shutdown summary (written by the `session-summary` plugin).
    Summary(show::IdArgs),
    /// Delete one session now: its journal, summary and registry entry. Refused while an
    /// acplb has it open. Its Codex thread is kept (an editor's `session/delete` deletes it).
    Delete(show::IdArgs),
}

/// Where sessions are kept, for `--help` (a macro, so help texts can `concat!` it).
macro_rules! where_kept {
    () => {
        "\
Sessions are kept in the state directory: $ACPLB_STATE_DIR, else $XDG_STATE_HOME/acplb, else
~/.local/state/acplb. There, sessions/<id>/ holds a session's journal and summary, and
registry/<identity>.json (registry/_local.json without an ATM identity) lists the sessions."
    };
}
use where_kept;

/// The `--help` text after `acplb sessions`' own.
pub(crate) const HELP: &str = concat!(
    where_kept!(),
    "

Examples:
  acplb sessions list                     every session, newest first
  acplb sessions list --cwd . --json      this directory's sessions as JSON
  acplb sessions show ID                  one session as readable text
  acplb sessions show -f ID               ... and what it does next, as it happens
  acplb sessions summary ID               its shutdown summary
  acplb sessions prune --dry-run          what `prune` would delete
  acplb sessions delete ID                one session, now"
);

/// Runs a `sessions` subcommand; `Ok(false)` (exit 1) when part of it failed.
pub(crate) fn run(command: &SessionsCommand) -> anyhow::Result<bool> {
    match command {
        SessionsCommand::List(args) => list::run(args),
        SessionsCommand::Prune(args) => prune::run(args),
        SessionsCommand::Show(args) => show::show(args),
        SessionsCommand::Summary(args) => show::summary(args),
        SessionsCommand::Delete(args) => delete::run(args),
    }
}

/// The state directory of this environment.
pub(crate) fn state_dir() -> anyhow::Result<PathBuf> {
    match acplb_core::sessions::state::state_dir_from_env() {
        Some(dir) => Ok(dir),
        None => bail!("no state directory: set ACPLB_STATE_DIR, XDG_STATE_HOME or HOME"),
    }
}

/// Prints a warning on stderr.
fn warn(text: &str) {
    // Nothing sensible is left to do when stderr is gone.
    writeln!(std::io::stderr(), "warning: {text}").ok();
}

/// How long ago `then` was, in its largest unit: `5m ago`, `3days ago`; `just now` under a
/// second (or in the future), `?` when unknown.
pub(crate) fn ago(now: SystemTime, then: Option<SystemTime>) -> String {
    let Some(then) = then else {
        return "?".to_owned();
    };
    let secs = now.duration_since(then).map_or(0, |d| d.as_secs());
    if secs == 0 {
        return "just now".to_owned();
    }
    let full = humantime::format_duration(Duration::from_secs(secs)).to_string();
    let largest = full.split_whitespace().next().unwrap_or("0s");
    format!("{largest} ago")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_shows_the_largest_unit() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let before = |s| Some(now - Duration::from_secs(s));
        assert_eq!(ago(now, before(0)), "just now");
        assert_eq!(ago(now, Some(now + Duration::from_secs(5))), "just now");
        assert_eq!(ago(now, before(42)), "42s ago");
        assert_eq!(ago(now, before(5 * 60 + 3)), "5m ago");
        assert_eq!(ago(now, before(3 * 3600 + 60)), "3h ago");
        assert_eq!(ago(now, before(3 * 86_400 + 60)), "3days ago");
        assert_eq!(ago(now, None), "?");
    }
}
