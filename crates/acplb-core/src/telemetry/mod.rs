//! Logging setup: tracing to stderr (filtered by `RUST_LOG`, coloured only on a terminal; written
//! by a thread of its own, so a reader that stops reading never holds acplb up: `stderr.rs`) and
//! optionally to a file, never to stdout, which carries the protocol; and what a panic does
//! (`panic.rs`).

mod panic;
mod stderr;

pub use panic::{PANIC_EXIT_STATUS, install_panic_hook};

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::IsTerminal as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

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
    /// The log file could not be opened for appending.
    #[error("cannot open the log file `{path}`: {source}")]
    LogFile {
        /// The file.
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
    _stderr: Option<stderr::StderrGuard>,
}

/// Installs the global subscriber: stderr at `RUST_LOG` (default `warn`), plus `log_file` at
/// `RUST_LOG` or `info` when given. Stderr is coloured only when it is a terminal and
/// `NO_COLOR` is unset or empty; the file never is.
pub fn init(log_file: Option<&Path>) -> Result<LogGuard, TelemetryError> {
    init_with(log_file, "warn", None)
}

/// A layer of the caller's (the worker daemon's per-worker files) beside stderr and the file.
pub type ExtraLayer = Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>;

/// As [`init`], with stderr's level when `RUST_LOG` is unset (`warn` for the ACP server, whose
/// stderr an editor keeps; `info` for a daemon in a terminal or a service manager) and an
/// `extra` layer.
pub fn init_with(
    log_file: Option<&Path>,
    stderr_default: &str,
    extra: Option<ExtraLayer>,
) -> Result<LogGuard, TelemetryError> {
    let stderr_filter = log_filter(stderr_default);
    let ansi = stderr_colour(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    );
    let (lines, stderr_guard) = stderr::start();
    let stderr = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(move || lines.clone())
        .with_filter(stderr_filter);
    let (file, guard) = match log_file {
        Some(path) => {
            let (writer, guard) = tracing_appender::non_blocking(open_log_file(path)?);
            let filter = log_filter("info");
            let layer = tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(writer)
                .with_filter(filter);
            (Some(layer), Some(guard))
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(extra)
        .with(caps())
        .with(stderr)
        .with(file)
        .try_init()
        .map_err(|_| TelemetryError::AlreadyInitialised)?;
    Ok(LogGuard {
        _file: guard,
        _stderr: stderr_guard,
    })
}

/// The filter `RUST_LOG` sets: a level (`debug`), per-target levels (`acplb_core=debug,warn`), or
/// `off`; `default` when it is unset or does not parse. Targets and levels only (no span or
/// field filters): the full `EnvFilter` grammar would bring a regex engine into the binary.
pub fn log_filter(default: &str) -> Targets {
    parse_filter(std::env::var("RUST_LOG").ok().as_deref(), default)
}

/// The ACP SDK's target that traces every JSON-RPC line in full (only env and header values
/// cut): an `authenticate` line holds an API key. Capped at `debug` whatever `RUST_LOG` says.
const RAW_LINES_TARGET: &str = "agent_client_protocol::jsonrpc::transport_actor";

/// The ACP SDK's target whose events name the whole handler chain, each handler's name quoted
/// inside the next one's, so each handler doubles it: with acplb's 29 handlers one event is over
/// 300 MB and takes seconds of the runtime thread. Its `trace` events come with every message;
/// its `warn` "Handler errored" with every request whose params do not parse (a client's
/// mistake, which the client is told anyway). Capped at `error` whatever `RUST_LOG` says.
const HANDLER_CHAIN_TARGET: &str = "agent_client_protocol::jsonrpc::incoming_actor";

fn parse_filter(value: Option<&str>, default: &str) -> Targets {
    let targets = value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .and_then(|v| v.parse().ok())
        .or_else(|| default.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::WARN));
    with_caps(targets)
}

/// `targets` with the SDK's costly targets capped, whatever `RUST_LOG` says.
fn with_caps(targets: Targets) -> Targets {
    targets
        .with_target(RAW_LINES_TARGET, tracing::Level::DEBUG)
        .with_target(HANDLER_CHAIN_TARGET, tracing::Level::ERROR)
}

/// The caps of [`parse_filter`] as a global filter as well: a per-layer filter alone does not
/// keep an event's fields from being built (an absent layer counts as interested), and the
/// handler chain's are what costs.
fn caps() -> Targets {
    with_caps(Targets::new().with_default(tracing::Level::TRACE))
}

/// Whether stderr gets ANSI colours: only on a terminal, and never when `NO_COLOR` is set to a
/// non-empty value (<https://no-color.org>). Editors capture stderr into their logs, where
/// escape codes are noise.
fn stderr_colour(is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    is_terminal && no_color.is_none_or(OsStr::is_empty)
}

/// Opens `path` for appending, creating it and its directory. Opened here, not by the
/// appender, so that a directory, an unwritable place or any other failure is an error the
/// caller can report (the appender panics on them). New files are 0600: logs at `debug` can
/// hold conversation text.
fn open_log_file(path: &Path) -> Result<File, TelemetryError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| TelemetryError::LogDir {
            path: dir.display().to_string(),
            source,
        })?;
    }
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|source| TelemetryError::LogFile {
            path: path.display().to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use std::os::unix::ffi::OsStrExt as _;
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn rust_log_sets_levels_per_target_and_a_bad_one_falls_back_to_the_default() {
        use tracing::Level;
        let f = parse_filter(Some("acplb_core=debug,warn"), "info");
        assert!(f.would_enable("acplb_core::runtime", &Level::DEBUG));
        assert!(!f.would_enable("acplb_codex", &Level::INFO));
        assert!(f.would_enable("acplb_codex", &Level::WARN));
        // The SDK's full JSON-RPC lines (an API key in `authenticate`) never reach a log.
        let all = parse_filter(Some("trace"), "info");
        assert!(all.would_enable("agent_client_protocol::jsonrpc", &Level::TRACE));
        assert!(!all.would_enable(RAW_LINES_TARGET, &Level::TRACE));
        assert!(!all.would_enable(HANDLER_CHAIN_TARGET, &Level::TRACE));
        assert!(!all.would_enable(HANDLER_CHAIN_TARGET, &Level::WARN));
        assert!(all.would_enable(HANDLER_CHAIN_TARGET, &Level::ERROR));
        let named = parse_filter(Some(&format!("{RAW_LINES_TARGET}=trace")), "info");
        assert!(!named.would_enable(RAW_LINES_TARGET, &Level::TRACE));
        let off = parse_filter(Some("off"), "info");
        assert!(!off.would_enable("acplb", &Level::ERROR));
        for unset in [None, Some(""), Some("acplb=loud")] {
            let f = parse_filter(unset, "info");
            assert!(f.would_enable("acplb", &Level::INFO), "{unset:?}");
            assert!(!f.would_enable("acplb", &Level::DEBUG), "{unset:?}");
        }
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(stderr_colour(true, None));
        assert!(stderr_colour(true, Some(OsStr::new(""))));
        assert!(!stderr_colour(true, Some(OsStr::new("1"))));
        assert!(!stderr_colour(false, None));
    }

    #[test]
    fn a_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let err = open_log_file(dir.path()).unwrap_err();
        assert!(matches!(err, TelemetryError::LogFile { .. }), "{err}");
        assert!(
            err.to_string().contains(&dir.path().display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn a_path_under_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let err = open_log_file(&file.join("acplb.log")).unwrap_err();
        assert!(matches!(err, TelemetryError::LogDir { .. }), "{err}");
    }

    #[test]
    fn creates_the_directory_and_a_private_file_with_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs").join(OsStr::from_bytes(b"acplb-\xff.log"));
        open_log_file(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
