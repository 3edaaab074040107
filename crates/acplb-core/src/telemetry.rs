//! Logging setup: tracing to stderr (filtered by `RUST_LOG`) and optionally to a file, never
//! to stdout, which carries the protocol.

use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The log file's directory could not be created.
    #[error("cannot create the log directory `{path}`: {source}")]
    LogDir {
        /// The directory.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A global subscriber was already installed.
    #[error("logging was already initialised")]
    AlreadyInitialised,
}

/// Keeps the file writer flushing; drop it last.
#[derive(Debug)]
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Installs the global subscriber: stderr at `RUST_LOG` (default `warn`), plus `log_file` at
/// `RUST_LOG` or `info` when given.
pub fn init(log_file: Option<&Path>) -> Result<LogGuard, TelemetryError> {
    let stderr_filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(stderr_filter);
    let (file, guard) = match log_file {
        Some(path) => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir).map_err(|source| TelemetryError::LogDir {
                path: dir.display().to_string(),
                source,
            })?;
            let name = path
                .file_name()
                .map_or_else(|| "acplb.log".into(), std::ffi::OsStr::to_os_string);
            let (writer, guard) = tracing_appender::non_blocking(tracing_appender::rolling::never(dir, name));
            let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
            let layer = tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(writer)
                .with_filter(filter);
            (Some(layer), Some(guard))
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init()
        .map_err(|_| TelemetryError::AlreadyInitialised)?;
    Ok(LogGuard { _file: guard })
}
