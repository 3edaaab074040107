//! What a worker is doing, as `acplb worker status` shows it.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

/// A worker's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkerState {
    /// Its session is being opened.
    Starting,
    /// Waiting for mail.
    Idle,
    /// At least one turn is running.
    Busy,
    /// It stopped unexpectedly and starts again after a pause.
    Restarting,
    /// It failed more often than `max_restart_attempts`; `acplb worker restart` starts it again.
    Failed,
    /// Stopped (shutdown, or removed from the configuration).
    Stopped,
}

impl WorkerState {
    /// The word `status` prints.
    pub fn word(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Idle => "idle",
            Self::Busy => "busy",
            Self::Restarting => "restarting",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
        }
    }
}

/// One worker, as the daemon reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerStatus {
    /// `name@team`.
    pub agent: String,
    /// What it does now.
    pub state: WorkerState,
    /// Its acplb session (open it in an editor with `session/load`, or `acplb worker attach`).
    pub session_id: Option<String>,
    /// Restarts after failures since the daemon started.
    pub restarts: u32,
    /// Messages answered (replies written) since the daemon started.
    pub answered: u64,
    /// Turns running now.
    pub running: usize,
    /// Why it last stopped unexpectedly.
    pub last_error: Option<String>,
    /// When it last started a turn (RFC 3339), if ever.
    pub last_active: Option<String>,
    /// Its log file.
    pub log_file: Option<String>,
}

impl WorkerStatus {
    /// A worker that is about to start.
    pub fn new(agent: String) -> Self {
        Self {
            agent,
            state: WorkerState::Starting,
            session_id: None,
            restarts: 0,
            answered: 0,
            running: 0,
            last_error: None,
            last_active: None,
            log_file: None,
        }
    }
}

/// The daemon's copy of a worker's status, updated by the worker's own task (one thread).
pub type StatusCell = Rc<RefCell<WorkerStatus>>;

/// Everything `acplb worker status --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    /// The daemon's process id.
    pub pid: u32,
    /// The configuration file in force.
    pub config: String,
    /// Every worker, by name.
    pub workers: Vec<WorkerStatus>,
}
