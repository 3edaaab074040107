//! What failed in a worker: why one run ended on its own (its text is the worker's
//! `last_error` in `acplb worker status`), or one mail, ledger or prompt step that is logged and
//! left for later.

use std::path::PathBuf;
use std::time::Duration;

use acplb_core::sessions::queue::QueueError;

/// What ended a worker's run (the supervisor then restarts it after a pause), or a step of
/// its work that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The host could not give the worker a server or a mailbox (its composer file, its
    /// plugins, its transport).
    #[error("{reason}")]
    Host {
        /// The host's message.
        reason: String,
    },
    /// The worker's runtime refused `initialize`.
    #[error("the worker's runtime refused `initialize`: {message}")]
    Initialize {
        /// The runtime's message.
        message: String,
    },
    /// Neither a `session/load` of the worker's session nor a `session/new` worked.
    #[error("cannot open the worker's session: {message}")]
    OpenSession {
        /// The runtime's message.
        message: String,
    },
    /// A session option of the agent (`mode`, `model`) was refused.
    #[error("cannot set {option} `{value}`: {message}")]
    Configure {
        /// `mode` or `model`.
        option: &'static str,
        /// The agent's value.
        value: String,
        /// The runtime's message.
        message: String,
    },
    /// The agent's team has no folder.
    #[error("team `{team}` has no folder at {} (create the team first)", dir.display())]
    NoTeam {
        /// The team.
        team: String,
        /// Where its folder should be.
        dir: PathBuf,
    },
    /// The files mailbox names no inbox folder.
    #[error("the worker's inbox has no folder")]
    NoInboxFolder,
    /// The inbox folder could not be created.
    #[error("cannot create the inbox folder {}: {source}", dir.display())]
    InboxFolder {
        /// The folder.
        dir: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A folder could not be watched (`what`: the inbox, the input queue).
    #[error("cannot watch the {what}: {source}")]
    Watch {
        /// Which folder.
        what: &'static str,
        /// The watcher's error.
        #[source]
        source: QueueError,
    },
    /// The worker's input queue could not be opened.
    #[error("cannot open the input queue: {source}")]
    Queue {
        /// The queue's error.
        #[source]
        source: QueueError,
    },
    /// A health check: the runtime answered with an error.
    #[error("health check: the worker's runtime refused: {message}")]
    HealthRefused {
        /// The runtime's message.
        message: String,
    },
    /// A health check: the runtime did not answer.
    #[error("health check: the worker's runtime did not answer within {waited:?}")]
    HealthSilent {
        /// How long it was given.
        waited: Duration,
    },
    /// A health check: the provider (Codex) is not well.
    #[error("health check: {reason}")]
    HealthProvider {
        /// The provider's message.
        reason: String,
    },
    /// Codex went away in the middle of a turn.
    #[error("{message}")]
    CodexGone {
        /// The runtime's message (it names the exit status).
        message: String,
    },
    /// The in-process connection to the worker's server failed.
    #[error("the worker's connection failed: {message}")]
    Connection {
        /// The connection's message.
        message: String,
    },
    /// The mailbox failed (its inbox, a reply, the roster, a mark as read).
    #[error("{action} failed: {message}")]
    Mail {
        /// What was being done.
        action: &'static str,
        /// The backend's message.
        message: String,
    },
    /// The ledger of replies sent through `atm` could not be read or written.
    #[error("cannot {action} the reply ledger {}: {source}", path.display())]
    Ledger {
        /// `read` or `write`.
        action: &'static str,
        /// The ledger file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A message's prompt would be longer than Codex accepts.
    #[error(transparent)]
    Prompt(#[from] crate::config::TooLong),
    /// A blocking task of the worker stopped before it answered.
    #[error("{what} stopped: {reason}")]
    Blocking {
        /// What the task did.
        what: &'static str,
        /// The join error.
        reason: String,
    },
}
