//! The error type of the playback library: every failure names the file (and line) it concerns.

use std::io;
use std::path::PathBuf;

/// What can go wrong while loading, recording, replaying or decoding.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlaybackError {
    /// A file could not be read or written.
    #[error("cannot access `{}`", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A scenario file is not valid TOML (the message carries the line and column).
    #[error("{}: {message}", path.display())]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A file is well-formed but says something playback cannot use.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, in words.
        message: String,
    },
    /// A process could not be started.
    #[error("failed to start `{}`", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Talking to a child process failed.
    #[error("{context}")]
    Process {
        /// What was being done.
        context: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A replay or recording did not go as the scenario says.
    #[error("{0}")]
    Session(String),
}

impl PlaybackError {
    /// An [`PlaybackError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> PlaybackError {
        let path = path.into();
        move |source| PlaybackError::Io { path, source }
    }

    /// An [`PlaybackError::Process`] with `context`.
    pub fn process(context: impl Into<String>) -> impl FnOnce(io::Error) -> PlaybackError {
        let context = context.into();
        move |source| PlaybackError::Process { context, source }
    }
}

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    let end = at.min(text.len());
    text.as_bytes()[..end].split(|b| *b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }

    #[test]
    fn invalid_names_file_and_line() {
        let e = PlaybackError::Invalid {
            path: "s.toml".into(),
            line: 7,
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "s.toml:7: bad");
    }
}
