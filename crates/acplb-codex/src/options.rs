//! How acplb runs Codex, whichever transport: the options, the child's environment, and the
//! limits and refusals both transports share.

use std::path::PathBuf;
use std::time::Duration;

use crate::mcp::McpLauncher;

/// The longest prompt Codex accepts, in characters ([`crate::prepare::check_prompt`]).
pub(crate) const MAX_PROMPT_CHARS: usize = 1 << 20;

/// How acplb runs Codex.
#[derive(Debug, Clone)]
pub struct CodexOptions {
    /// The Codex binary.
    pub program: PathBuf,
    /// `-c key=value` overrides passed to every run.
    pub overrides: Vec<String>,
    /// Largest command output shown in a tool call, in bytes.
    pub max_output_bytes: usize,
    /// Longest JSONL line accepted from Codex.
    pub max_line_bytes: usize,
    /// Time Codex gets to exit after an interrupt before it is killed.
    pub interrupt_grace: Duration,
    /// Where to write provider transcripts (see `transcript.rs`), if anywhere.
    pub transcript_dir: Option<PathBuf>,
    /// How stdio MCP servers with `env` are started (see `mcp/`); without one such servers
    /// are refused, since their values would otherwise go on Codex's command line.
    pub mcp_launcher: Option<McpLauncher>,
    /// The editor's backpressure: a shared app-server's output is read only while the editor
    /// keeps up (the default never waits).
    pub output_flow: acplb_core::transport::OutputFlow,
    /// The time limit of every request to a shared app-server, `initialize` included; `None`
    /// for the defaults (30 s for `initialize`, 60 s for the rest). [`CodexOptions::new`] takes
    /// it from `ACPLB_CODEX_REQUEST_TIMEOUT_MS` (milliseconds), a setting for tests.
    pub request_limit: Option<Duration>,
    /// Whether a session's opening asks Codex for its models (ADR 0025); without, the
    /// compiled-in list is offered. [`CodexOptions::new`] turns it off when
    /// `ACPLB_CODEX_MODEL_LIST` is `off` (what playback sets: its recordings hold no list).
    pub list_models: bool,
    /// Whether a session offers Codex's skills and custom prompts as slash commands (ADR
    /// 0032), asking Codex for its skills; [`CodexOptions::new`] turns it off when
    /// `ACPLB_CODEX_SKILL_LIST` is `off` (what playback sets: its recordings hold no list).
    pub list_skills: bool,
    /// Whether a session's opening asks Codex for its permission profiles (ADR 0038), offered
    /// as modes; [`CodexOptions::new`] turns it off when `ACPLB_CODEX_PROFILE_LIST` is `off`
    /// (what playback sets: its recordings hold no list).
    pub list_profiles: bool,
    /// The mode a new session starts in (ADR 0038): one of acplb's own, or
    /// `permission-profile:<id>` on app-server; [`CodexOptions::new`] takes it from
    /// `ACPLB_INITIAL_MODE`. `None`: `read-only`.
    pub initial_mode: Option<String>,
    /// How long a turn's answer waits for the subagents it left working, for a client that
    /// takes them in AIR's shapes (ADR 0055); [`CodexOptions::new`] takes it from
    /// `ACPLB_CODEX_SUBAGENT_WAIT_MS`, else ten minutes (the TS peer's).
    pub subagent_wait: Duration,
}

impl CodexOptions {
    /// Defaults for `program`.
    pub fn new(program: PathBuf) -> Self {
        Self {
            program,
            overrides: Vec::new(),
            max_output_bytes: 64 * 1024,
            max_line_bytes: 16 * 1024 * 1024,
            interrupt_grace: Duration::from_millis(300),
            transcript_dir: None,
            mcp_launcher: None,
            output_flow: acplb_core::transport::OutputFlow::default(),
            request_limit: request_limit_from_env(),
            list_models: !std::env::var("ACPLB_CODEX_MODEL_LIST").is_ok_and(|v| v.trim() == "off"),
            list_skills: !std::env::var("ACPLB_CODEX_SKILL_LIST").is_ok_and(|v| v.trim() == "off"),
            list_profiles: !std::env::var("ACPLB_CODEX_PROFILE_LIST").is_ok_and(|v| v.trim() == "off"),
            initial_mode: std::env::var("ACPLB_INITIAL_MODE")
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty()),
            subagent_wait: subagent_wait_from_env(),
        }
    }
}

/// `ACPLB_CODEX_SUBAGENT_WAIT_MS`, when it is a positive number of milliseconds; else ten
/// minutes.
fn subagent_wait_from_env() -> Duration {
    const TEN_MINUTES: Duration = Duration::from_secs(600);
    let Ok(value) = std::env::var("ACPLB_CODEX_SUBAGENT_WAIT_MS") else {
        return TEN_MINUTES;
    };
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Duration::from_millis(ms),
        _ => {
            tracing::warn!(%value, "ignoring ACPLB_CODEX_SUBAGENT_WAIT_MS: not a positive number of milliseconds");
            TEN_MINUTES
        }
    }
}

/// `ACPLB_CODEX_REQUEST_TIMEOUT_MS`, when it is a positive number of milliseconds.
fn request_limit_from_env() -> Option<Duration> {
    let value = std::env::var("ACPLB_CODEX_REQUEST_TIMEOUT_MS").ok()?;
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Some(Duration::from_millis(ms)),
        _ => {
            tracing::warn!(%value, "ignoring ACPLB_CODEX_REQUEST_TIMEOUT_MS: not a positive number of milliseconds");
            None
        }
    }
}

/// Why the provider refuses MCP servers over SSE.
pub(crate) const SSE_REFUSAL: &str = "Codex does not support";

/// Why plan mode is not offered on the exec transport (completing "mode `plan` is not
/// available: …").
pub(crate) const PLAN_REFUSAL: &str = "plan mode needs Codex's app-server transport, and this acplb runs \
     Codex with `--transport exec` (ACPLB_TRANSPORT=exec); start acplb on the default transport to plan";

/// `RUST_LOG` configures acplb; Codex would read it too and flood its stderr, so it is removed
/// and `ACPLB_CODEX_RUST_LOG`, when set, becomes Codex's `RUST_LOG`.
pub(crate) fn child_env(mut env: Vec<(String, String)>) -> Vec<(String, String)> {
    if let Ok(level) = std::env::var("ACPLB_CODEX_RUST_LOG") {
        env.push(("RUST_LOG".into(), level));
    }
    env
}
