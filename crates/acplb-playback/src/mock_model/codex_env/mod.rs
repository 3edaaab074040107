//! A throwaway setup in which the real Codex CLI talks to the mock model: home, sandbox helper, git workspace, runs.
//!
//! [`CodexTestEnv`] makes a temporary directory holding
//! - `home/config.toml`: model `gpt-5.5` from provider `mock` at the mock's `base_url` (`wire_api =
//!   "responses"`, `env_key = "MOCK_API_KEY"`, no retries, no update check, no plugins, no analytics);
//! - `bin/codex-linux-sandbox`: a symlink to the codex binary. With `CODEX_HOME` under `/tmp` Codex
//!   refuses to create this helper itself, and without it every sandboxed command fails in bubblewrap;
//! - `repo/`: a git repository with `README.md` (`# demo repo`) and `main.py`, committed.
//!
//! [`CodexTestEnv::exec_command`] spawns `codex exec --json --skip-git-repo-check --disable
//! unbounded_connection_retries …` there with stdin from `/dev/null` (an open stdin makes exec wait for
//! EOF) and [`CodexTestEnv::run_exec`] runs it to the end under a timeout.

mod run;
mod setup;

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use run::CodexRun;
pub use setup::{CodexTestEnv, CodexTestEnvBuilder};

/// The environment variable naming the codex binary to use.
pub const CODEX_ENV_VAR: &str = "ACPLB_CODEX_TEST_BIN";
/// The Codex CLI version the mock and the tests are written against.
pub const CODEX_VERSION: &str = "0.169.0";
/// The environment variable holding the (dummy) API key; Codex sends it as `Authorization: Bearer …`.
pub const API_KEY_ENV_VAR: &str = "MOCK_API_KEY";
/// The API key value set by [`CodexTestEnv::env_vars`].
pub const API_KEY: &str = "dummy";
/// The arguments every exec run starts with.
pub const EXEC_BASE_ARGS: [&str; 5] = [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--disable",
    "unbounded_connection_retries",
];

/// Where the codex binary is, relative to `$HOME`, when [`CODEX_ENV_VAR`] is unset.
const DEFAULT_CODEX_UNDER_HOME: &str = ".cache/acplb/codex-0.169.0/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";

/// What can go wrong while preparing or running Codex.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodexEnvError {
    /// No codex binary where one was expected.
    #[error(
        "codex {CODEX_VERSION} not found at `{path}`; install it with `scripts/install-test-deps` (npm install --prefix ~/.cache/acplb/codex-0.169.0 @openai/codex@0.169.0), or set {CODEX_ENV_VAR} to a codex binary"
    )]
    CodexNotFound {
        /// The path looked at.
        path: String,
    },
    /// A file or directory of the setup could not be made.
    #[error("failed to prepare `{}`", path.display())]
    Io {
        /// The path being written.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A git command failed.
    #[error("`git {args}` failed: {stderr}")]
    Git {
        /// The git arguments.
        args: String,
        /// What git printed on stderr (or why it did not run).
        stderr: String,
    },
    /// Codex could not be spawned.
    #[error("failed to spawn `{}`", program.display())]
    Spawn {
        /// The binary.
        program: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Reading Codex's output or waiting for it failed.
    #[error("failed to wait for codex")]
    Wait(#[source] io::Error),
    /// Codex ran past the timeout and was killed.
    #[error(
        "codex did not finish within {timeout:?} and was killed\n--- stdout so far\n{stdout}\n--- stderr so far\n{stderr}"
    )]
    Timeout {
        /// The timeout.
        timeout: Duration,
        /// Stdout read before the kill.
        stdout: String,
        /// Stderr read before the kill.
        stderr: String,
    },
}

/// The codex binary: `$ACPLB_CODEX_TEST_BIN` if set (what `scripts/test` exports), else the pinned install under `~/.cache/acplb`.
pub fn codex_binary() -> Result<PathBuf, CodexEnvError> {
    let path = match std::env::var_os(CODEX_ENV_VAR) {
        Some(path) => PathBuf::from(path),
        None => match std::env::var_os("HOME") {
            Some(home) => Path::new(&home).join(DEFAULT_CODEX_UNDER_HOME),
            None => {
                return Err(CodexEnvError::CodexNotFound {
                    path: format!("$HOME/{DEFAULT_CODEX_UNDER_HOME}"),
                });
            }
        },
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(CodexEnvError::CodexNotFound {
            path: path.display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_codex_error_says_how_to_install() {
        let message = CodexEnvError::CodexNotFound {
            path: "/nowhere/codex".into(),
        }
        .to_string();
        assert!(message.contains("/nowhere/codex"), "{message}");
        assert!(
            message.contains("npm install --prefix ~/.cache/acplb/codex-0.169.0 @openai/codex@0.169.0"),
            "{message}"
        );
        assert!(message.contains("ACPLB_CODEX"), "{message}");
    }
}
