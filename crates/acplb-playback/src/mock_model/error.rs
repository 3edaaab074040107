//! The one error type of the mock model: script loading, binding and serving.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Everything that can go wrong while loading a script or starting the mock model server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MockError {
    /// A script file could not be read.
    #[error("failed to read mock script `{}`", path.display())]
    ReadScript {
        /// The file that was read.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A script did not parse or failed validation.
    #[error("invalid mock script `{origin}`: {message}")]
    Script {
        /// Where the script came from (a path, or `built-in`).
        origin: String,
        /// What is wrong, with a line and column when the parser knows them.
        message: String,
    },
    /// The listening socket could not be bound.
    #[error("failed to bind the mock model to `{addr}`")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The request log file could not be opened.
    #[error("failed to open the request log `{}`", path.display())]
    LogFile {
        /// The log file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The server thread or its runtime could not be started.
    #[error("failed to start the mock model server thread")]
    Start {
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}
