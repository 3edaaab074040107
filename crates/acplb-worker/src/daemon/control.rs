//! The daemon's control socket (`<state>/workers/control.sock`, in a `0700` folder): one JSON
//! request per connection, one JSON answer. `acplb worker status` and `restart` use it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::status::DaemonStatus;

/// How long a command waits for the daemon.
const WAIT: Duration = Duration::from_secs(10);
/// The longest request line the daemon reads.
pub(crate) const MAX_REQUEST: usize = 4096;

/// The socket's path.
pub fn socket_path(state: &Path) -> PathBuf {
    state.join("workers").join("control.sock")
}

/// A request to the daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    /// Every worker's status.
    Status,
    /// Restart one worker.
    Restart {
        /// `name@team`.
        agent: String,
    },
}

/// The daemon's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Answer {
    /// The status.
    Status(DaemonStatus),
    /// Done.
    Ok {
        /// What was done.
        message: String,
    },
    /// Refused.
    Error {
        /// Why.
        message: String,
    },
}

/// Why a command could not reach the daemon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// Nothing listens on the socket.
    #[error("no worker daemon is running (nothing answers at {}); start one with `acplb worker`", path.display())]
    NotRunning {
        /// The socket.
        path: PathBuf,
    },
    /// The daemon did not answer properly.
    #[error("the worker daemon did not answer properly: {0}")]
    Broken(String),
}

/// Sends `request` to the daemon of the state dir `state` and returns its answer (blocking).
pub fn ask(state: &Path, request: &Request) -> Result<Answer, ControlError> {
    let path = socket_path(state);
    let mut stream =
        UnixStream::connect(&path).map_err(|_| ControlError::NotRunning { path: path.clone() })?;
    let broken = |e: std::io::Error| ControlError::Broken(e.to_string());
    stream.set_read_timeout(Some(WAIT)).map_err(broken)?;
    stream.set_write_timeout(Some(WAIT)).map_err(broken)?;
    let mut line = serde_json::to_string(request).map_err(|e| ControlError::Broken(e.to_string()))?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(broken)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).map_err(broken)?;
    serde_json::from_str(&answer).map_err(|e| ControlError::Broken(format!("{e} in {answer:?}")))
}
