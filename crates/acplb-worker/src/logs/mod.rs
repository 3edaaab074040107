//! Per-worker log files, rotated by size: everything a worker's span sees, in its own file.
//!
//! The daemon enters `tracing::info_span!("worker", worker = %name)` (`name@team`) around each
//! worker's work; [`WorkerLogs`] sends the events inside to `<log_dir>/<name@team>.log` (0600,
//! the directory 0700), redacted, rotated at a size limit.

mod files;
mod layer;

use std::io;
use std::path::PathBuf;

pub use layer::{ErrorCount, WorkerLogs};

/// The span field that names the worker (`name@team`) whose file an event goes to.
pub const WORKER_FIELD: &str = "worker";

/// Why the worker logs could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The log directory could not be created.
    #[error("failed to create the log directory `{path}`")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A size limit of zero would rotate on every line.
    #[error("the log size limit must be above zero")]
    ZeroMaxBytes,
}

#[cfg(test)]
mod tests;
