//! The validated configuration: what the daemon reads after `workers.toml` (and any trusted
//! repository overrides) passed every check.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::name::AgentName;

/// The template used when an agent sets none: the mail text alone.
pub const DEFAULT_PROMPT_TEMPLATE: &str = "{message}";

/// `max_concurrent` when none is given.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;

/// The largest `max_concurrent`.
pub const MAX_CONCURRENT_LIMIT: usize = 64;

/// The mode of an agent that sets none.
pub const DEFAULT_MODE: &str = "auto";

/// The whole configuration of `acplb worker`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkersConfig {
    /// `[workers]`: the daemon's own settings.
    pub settings: WorkerSettings,
    /// `[workers.agents."name@team"]`, by name (disabled ones included).
    pub agents: BTreeMap<AgentName, AgentConfig>,
    /// What was ignored on purpose and why (an untrusted repository's overrides, a repository
    /// table for an agent the machine file does not have), for the daemon to log.
    pub notes: Vec<String>,
}

impl WorkersConfig {
    /// The agents to run: the enabled ones, none when `[workers] enabled = false`.
    pub fn enabled_agents(&self) -> impl Iterator<Item = &AgentConfig> {
        let on = self.settings.enabled;
        self.agents.values().filter(move |a| on && a.enabled)
    }
}

/// `[workers]`: how the daemon supervises its agents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerSettings {
    /// `enabled`: whether the daemon runs any agent (default `true`).
    pub enabled: bool,
    /// `log_dir`: where agent logs go; `None` means `<state dir>/workers/logs` (see
    /// [`WorkerSettings::log_dir_or_default`]).
    pub log_dir: Option<PathBuf>,
    /// `inactivity_timeout_ms` (default 300 000).
    pub inactivity_timeout: Duration,
    /// `health_check_interval_secs` (default 30, never zero).
    pub health_check_interval: Duration,
    /// `max_restart_attempts` (default 3).
    pub max_restart_attempts: u32,
    /// `restart_backoff_secs`: the first wait before a restart, doubled each attempt (default 5).
    pub restart_backoff: Duration,
    /// `shutdown_timeout_secs`: how long an agent may take to stop (default 10, never zero).
    pub shutdown_timeout: Duration,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            log_dir: None,
            inactivity_timeout: Duration::from_secs(300),
            health_check_interval: Duration::from_secs(30),
            max_restart_attempts: 3,
            restart_backoff: Duration::from_secs(5),
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

impl WorkerSettings {
    /// `log_dir`, else `<state dir>/workers/logs` (`env` looks a variable up, as
    /// [`acplb_core::sessions::state::state_dir`] does); `None` when neither can be known.
    pub fn log_dir_or_default(&self, env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        self.log_dir
            .clone()
            .or_else(|| acplb_core::sessions::state::state_dir(env).map(|s| s.join("workers").join("logs")))
    }
}

/// What an agent does with mail that arrives while it is busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// `queue`: keep it and deliver it when the current turn ends.
    #[default]
    Queue,
    /// `reject`: refuse it while busy.
    Reject,
    /// `concurrent`: run up to `max_concurrent` turns at once, the extra ones each on a Codex
    /// thread forked from the worker's own.
    Concurrent,
}

impl Policy {
    /// Every policy, in the order the documentation lists them.
    pub const ALL: [Policy; 3] = [Policy::Queue, Policy::Reject, Policy::Concurrent];

    /// The word `workers.toml` uses.
    pub fn word(self) -> &'static str {
        match self {
            Policy::Queue => "queue",
            Policy::Reject => "reject",
            Policy::Concurrent => "concurrent",
        }
    }

    /// Parses the word `workers.toml` uses.
    pub fn from_word(word: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.word() == word)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// One validated `[workers.agents."name@team"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// The agent.
    pub name: AgentName,
    /// `enabled` (default `true`).
    pub enabled: bool,
    /// `prompt_template` (default `{message}`); holds only `{message}`, `{from}`, `{summary}`,
    /// `{{` and `}}`, and always `{message}`.
    pub prompt_template: String,
    /// `concurrency_policy` (default `queue`).
    pub policy: Policy,
    /// `max_concurrent`: 1 to 64, used only by [`Policy::Concurrent`] (default 4).
    pub max_concurrent: usize,
    /// `cwd`: an existing directory, absolute (`~/` expanded).
    pub cwd: PathBuf,
    /// `mode`: an ACP mode id, `read-only`, `auto` or `full-access` (default `auto`).
    pub mode: String,
    /// `model`, when set.
    pub model: Option<String>,
    /// `transport`: `app-server` or `exec`, when set.
    pub transport: Option<String>,
    /// `composer`: an existing extra composer file, when set.
    pub composer: Option<PathBuf>,
    /// `accept_from_non_members` (default `false`): whether mail from a sender who is not a
    /// member of the agent's team becomes a turn. Only the machine file may set it.
    pub accept_from_non_members: bool,
    /// `file:line` of the agent's table in the machine file.
    pub origin: String,
}

impl AgentConfig {
    /// Whether anything but `origin` differs.
    pub(crate) fn same_settings(&self, other: &AgentConfig) -> bool {
        let AgentConfig {
            name,
            enabled,
            prompt_template,
            policy,
            max_concurrent,
            cwd,
            mode,
            model,
            transport,
            composer,
            accept_from_non_members,
            origin: _,
        } = self;
        *name == other.name
            && *enabled == other.enabled
            && *prompt_template == other.prompt_template
            && *policy == other.policy
            && *max_concurrent == other.max_concurrent
            && *cwd == other.cwd
            && *mode == other.mode
            && *model == other.model
            && *transport == other.transport
            && *composer == other.composer
            && *accept_from_non_members == other.accept_from_non_members
    }
}
