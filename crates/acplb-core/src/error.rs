//! Errors of the runtime and of providers, and their one conversion to ACP wire errors.

mod reason;
pub(crate) mod wire;

use std::path::PathBuf;

pub use reason::Reason;

/// Why a provider turn failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The provider binary could not be started.
    #[error("failed to start `{program}`: {source}")]
    Spawn {
        /// The program that was run.
        program: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The session's working directory no longer exists (deleted after `session/new`), so the
    /// provider cannot be started in it.
    #[error(
        "the session's working directory `{}` is gone ({source}); open a new session in an existing directory",
        cwd.display()
    )]
    WorkDirGone {
        /// The directory.
        cwd: PathBuf,
        /// Why it cannot be entered.
        #[source]
        source: std::io::Error,
    },
    /// The provider process ended before finishing the turn.
    #[error("`{program}` exited before the turn finished ({status}){}", tail_suffix(.stderr_tail))]
    Exited {
        /// The program.
        program: PathBuf,
        /// Exit status as text (`exit status: 1`, `signal: 9`).
        status: String,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// The provider process stopped answering (it did not answer a request within its time
    /// limit), so acplb stopped it; the next prompt starts a new one.
    #[error(
        "`{process}` did not answer {unanswered}; acplb stopped it, and the next prompt starts it again{}",
        tail_suffix(.stderr_tail)
    )]
    Unresponsive {
        /// The process (`/usr/bin/codex app-server`).
        process: String,
        /// What it did not answer, and within what time (`` `turn/start` within 1m ``).
        unanswered: String,
        /// The last lines of its stderr.
        stderr_tail: String,
    },
    /// The provider reported that the turn failed.
    #[error("{message}")]
    TurnFailed {
        /// The provider's message.
        message: String,
        /// What kind of failure it was (for typed session failures, ADR 0054).
        kind: crate::provider::FailureKind,
        /// The incident the provider already told the client of in this turn, which the
        /// failure goes on (`None`: a new one).
        incident: Option<crate::provider::Incident>,
    },
    /// The provider needs the user to log in.
    #[error("{message}")]
    AuthRequired {
        /// The provider's message plus a hint.
        message: String,
        /// The ids of the `authenticate` methods that sign the user in (`data.authMethods`).
        methods: Vec<String>,
    },
    /// Preparing the turn failed (temp files, prompt input).
    #[error("failed to prepare the turn: {0}")]
    Prepare(String),
    /// Reading from or writing to the provider failed.
    #[error("i/o with the provider failed: {0}")]
    Io(#[from] std::io::Error),
}

impl ProviderError {
    /// A failed turn of no particular kind, with the provider's `message`.
    pub fn turn_failed(message: impl Into<String>) -> Self {
        Self::TurnFailed {
            message: message.into(),
            kind: crate::provider::FailureKind::default(),
            incident: None,
        }
    }
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; stderr:\n{}", tail.trim_end())
    }
}
