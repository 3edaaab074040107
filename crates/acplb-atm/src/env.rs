//! Injectable environment lookup and the home directories derived from it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Where environment variables come from; tests pass a map instead of mutating the process env.
pub trait EnvSource: Send + Sync {
    /// The value of `key`, or `None` when unset or empty.
    fn var(&self, key: &str) -> Option<String>;
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn var(&self, key: &str) -> Option<String> {
        std::env::var(key).ok().filter(|v| !v.is_empty())
    }
}

impl<S: std::hash::BuildHasher + Send + Sync> EnvSource for HashMap<String, String, S> {
    fn var(&self, key: &str) -> Option<String> {
        self.get(key).filter(|v| !v.is_empty()).cloned()
    }
}

impl EnvSource for BTreeMap<String, String> {
    fn var(&self, key: &str) -> Option<String> {
        self.get(key).filter(|v| !v.is_empty()).cloned()
    }
}

impl<F: Fn(&str) -> Option<String> + Send + Sync> EnvSource for F {
    fn var(&self, key: &str) -> Option<String> {
        self(key).filter(|v| !v.is_empty())
    }
}

/// The home directory ATM uses: `$ATM_HOME` when set, else `$HOME`.
///
/// `ATM_HOME` names a *home* directory (it holds `.claude/` and `.config/atm/`), not a `.claude`
/// directory, and `CLAUDE_CONFIG_DIR` is deliberately ignored, matching every ATM version.
pub fn atm_home(env: &dyn EnvSource) -> Option<PathBuf> {
    env.var("ATM_HOME").or_else(|| env.var("HOME")).map(PathBuf::from)
}

/// The Claude root (`<ATM_HOME|HOME>/.claude`) that holds `teams/<team>/inboxes/`.
pub fn claude_root(env: &dyn EnvSource) -> Option<PathBuf> {
    atm_home(env).map(|home| home.join(".claude"))
}

/// The per-team directory of agent sessions: `<ATM_HOME|HOME>/.config/atm/agent-sessions/<team>`.
///
/// Identity locks and the audit log live here, at the same paths atm-agent-mcp uses, so each
/// sees the other's claims.
pub fn agent_sessions_dir(env: &dyn EnvSource, team: &str) -> Option<PathBuf> {
    atm_home(env).map(|home| home.join(".config").join("atm").join("agent-sessions").join(team))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn atm_home_wins_over_home() {
        let e = env(&[("ATM_HOME", "/a"), ("HOME", "/h")]);
        assert_eq!(claude_root(&e), Some(PathBuf::from("/a/.claude")));
        let e = env(&[("ATM_HOME", ""), ("HOME", "/h")]);
        assert_eq!(claude_root(&e), Some(PathBuf::from("/h/.claude")));
        assert_eq!(claude_root(&env(&[])), None);
    }

    #[test]
    fn sessions_dir_layout() {
        let e = env(&[("HOME", "/h")]);
        assert_eq!(
            agent_sessions_dir(&e, "demo"),
            Some(PathBuf::from("/h/.config/atm/agent-sessions/demo"))
        );
    }
}
