//! Errors of the mail subsystem (inbox files, the Claude lock, the `atm` CLI backend).

use std::path::PathBuf;
use std::time::Duration;

/// Why a mail operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MailError {
    /// An agent or team name is empty or contains `..`.
    #[error("invalid agent or team name `{name}`")]
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// A recipient that cannot be a member's name (a path, a file name, ...).
    #[error(
        "`{name}` is not a valid recipient: use a member's name (letters, digits, `-`, `_`), as `agent` or `agent@team`"
    )]
    InvalidRecipient {
        /// The recipient as given.
        name: String,
    },
    /// A recipient the team's roster (`config.json` members) does not list.
    #[error("`{name}` is not a member of team `{team}`; its members are: {}", members.join(", "))]
    UnknownRecipient {
        /// The recipient as given.
        name: String,
        /// The team whose roster was checked.
        team: String,
        /// The roster's names, in file order.
        members: Vec<String>,
    },
    /// Neither `ATM_HOME` nor `HOME` is set, so there is no Claude root.
    #[error("cannot locate the claude root: neither `ATM_HOME` nor `HOME` is set")]
    NoHome,
    /// The recipient's team has no directory under the Claude root.
    #[error("team `{team}` does not exist (no directory `{}`)", path.display())]
    UnknownTeam {
        /// The team name.
        team: String,
        /// The directory that was expected.
        path: PathBuf,
    },
    /// A file or directory operation failed.
    #[error("{action} `{}` failed: {source}", path.display())]
    Io {
        /// What was being done (`read`, `rename`, ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An inbox exists but is not a JSON array; it is left untouched.
    #[error("inbox `{}` is not a valid json array (left untouched): {reason}", path.display())]
    CorruptInbox {
        /// The inbox file.
        path: PathBuf,
        /// The parse error, with line and column.
        reason: String,
    },
    /// The team's `config.json` could not be read or parsed.
    #[error("team config `{}` is unusable: {reason}", path.display())]
    TeamConfig {
        /// The config file.
        path: PathBuf,
        /// What was wrong with it.
        reason: String,
    },
    /// Another writer held the inbox lock for too long.
    #[error("timed out after {waited:?} waiting for the inbox lock `{}`", path.display())]
    LockTimeout {
        /// The lock path (`<agent>.json.lock`).
        path: PathBuf,
        /// How long we waited.
        waited: Duration,
    },
    /// A receipt was committed to a store other than the one that issued it.
    #[error("receipt for `{receipt}` cannot be committed to `{store}`")]
    ForeignReceipt {
        /// The mailbox the receipt was issued for.
        receipt: String,
        /// The mailbox of the backend it was given to.
        store: String,
    },
    /// The `atm` binary could not be run.
    #[error("failed to run `{program}`: {source}")]
    CliSpawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `atm` did not finish within its time limit and was killed.
    #[error("`atm {command}` did not finish within {limit:?} and was stopped")]
    CliTimeout {
        /// The subcommand (`send`, `list`, ...).
        command: String,
        /// The time limit.
        limit: Duration,
    },
    /// `atm` exited with an error or printed output we could not understand.
    #[error("`atm {command}` failed: {message}")]
    Cli {
        /// The subcommand (`send`, `list`, ...).
        command: String,
        /// Its status and stderr, or the parse problem.
        message: String,
    },
}

impl MailError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
