//! Who this agent is: identity and team resolution, the per-identity collision lock, and the
//! sharing of one claim by every session of a process.

mod claim;
mod shared;

use std::path::{Path, PathBuf};

pub use claim::IdentityClaim;
pub use shared::SharedClaim;

use crate::env::EnvSource;

/// The identity used when nothing names one.
pub const DEFAULT_IDENTITY: &str = "codex";
/// The team used when nothing names one.
pub const DEFAULT_TEAM: &str = "default";

/// Why resolving or claiming an identity failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The identity or team is empty or contains `..`.
    #[error("invalid identity or team name `{name}`")]
    InvalidName {
        /// The name as given.
        name: String,
    },
    /// Neither `ATM_HOME` nor `HOME` is set, so there is nowhere to put the lock.
    #[error("cannot locate the agent-sessions directory: neither `ATM_HOME` nor `HOME` is set")]
    NoHome,
    /// A lock file operation failed.
    #[error("{action} `{}` failed: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An exact claim (a worker's) found the name held by another live process.
    #[error(
        "identity `{identity}` is held by another live process (lock `{}`); a worker never takes a suffixed name: stop that session or choose another agent name",
        path.display()
    )]
    Held {
        /// The identity.
        identity: String,
        /// The lock file.
        path: PathBuf,
    },
    /// Every suffixed name up to the limit is held by a live session.
    #[error("identity `{identity}` and its suffixes up to `-{limit}` are all held by live sessions")]
    Exhausted {
        /// The requested identity.
        identity: String,
        /// The highest suffix tried.
        limit: u32,
    },
}

/// Where a resolved value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// An explicit parameter (CLI flag).
    Explicit,
    /// `ATM_IDENTITY` / `ATM_TEAM`.
    Env,
    /// `[core]` of this `.atm.toml`.
    AtmToml(PathBuf),
    /// The built-in default.
    Default,
}

/// The identity and team this agent runs as (names sanitised, before the collision lock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedIdentity {
    /// The identity (`from` of sent mail, own inbox name).
    pub identity: String,
    /// Where `identity` came from.
    pub identity_source: Source,
    /// The team.
    pub team: String,
    /// Where `team` came from.
    pub team_source: Source,
}

/// Resolves identity and team: explicit parameter, else `ATM_IDENTITY` / `ATM_TEAM`, else
/// `[core] identity` / `default_team` of the nearest `.atm.toml` above `workspace`, else
/// [`DEFAULT_IDENTITY`] / [`DEFAULT_TEAM`].
pub fn resolve(
    identity: Option<&str>,
    team: Option<&str>,
    env: &dyn EnvSource,
    workspace: &Path,
) -> Result<ResolvedIdentity, IdentityError> {
    let core = find_atm_toml(workspace).map(|path| (read_core(&path), path));
    let pick = |explicit: Option<&str>, var: &str, key: &str, default: &str| -> (String, Source) {
        if let Some(v) = explicit.filter(|v| !v.trim().is_empty()) {
            return (v.to_owned(), Source::Explicit);
        }
        if let Some(v) = env.var(var) {
            return (v, Source::Env);
        }
        if let Some((core, path)) = &core
            && let Some(v) = core
                .get(key)
                .and_then(toml::Value::as_str)
                .filter(|v| !v.trim().is_empty())
        {
            return (v.to_owned(), Source::AtmToml(path.clone()));
        }
        (default.to_owned(), Source::Default)
    };
    let (identity, identity_source) = pick(identity, "ATM_IDENTITY", "identity", DEFAULT_IDENTITY);
    let (team, team_source) = pick(team, "ATM_TEAM", "default_team", DEFAULT_TEAM);
    Ok(ResolvedIdentity {
        identity: sanitize(&identity)?,
        identity_source,
        team: sanitize(&team)?,
        team_source,
    })
}

fn sanitize(name: &str) -> Result<String, IdentityError> {
    crate::names::sanitize(name).map_err(|_| IdentityError::InvalidName {
        name: name.to_owned(),
    })
}

/// The nearest `.atm.toml` in `workspace` or one of its ancestors.
fn find_atm_toml(workspace: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_owned());
    start
        .ancestors()
        .map(|dir| dir.join(".atm.toml"))
        .find(|p| p.is_file())
}

/// The `[core]` table of an `.atm.toml`, empty when the file cannot be read or parsed.
///
/// Lenient on purpose: ATM 0.x rejects a `[core]` holding only one of its two keys, but one key
/// is enough here, and unknown tables (`[atm]`, `[plugins.*]`) are ignored.
fn read_core(path: &Path) -> toml::Table {
    let parsed = std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| text.parse::<toml::Table>().map_err(|e| e.to_string()));
    match parsed {
        Ok(mut table) => match table.remove("core") {
            Some(toml::Value::Table(core)) => core,
            _ => toml::Table::new(),
        },
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "ignoring unreadable .atm.toml");
            toml::Table::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn order_is_param_env_toml_default() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("repo/sub");
        std::fs::create_dir_all(&ws).unwrap();
        let none = env(&[]);
        let r = resolve(None, None, &none, &ws).unwrap();
        assert_eq!((r.identity.as_str(), r.team.as_str()), ("codex", "default"));
        assert_eq!(r.identity_source, Source::Default);

        let toml_path = root.path().join("repo/.atm.toml");
        std::fs::write(
            &toml_path,
            "[core]\nidentity = \"arch.ctm\"\n[plugins.x]\ny = 1\n",
        )
        .unwrap();
        let r = resolve(None, None, &none, &ws).unwrap();
        assert_eq!(r.identity, "arch-ctm");
        assert!(matches!(r.identity_source, Source::AtmToml(ref p) if p.ends_with("repo/.atm.toml")));
        assert_eq!(r.team, "default", "one key is enough; the other falls through");

        let e = env(&[("ATM_IDENTITY", "from-env"), ("ATM_TEAM", "t-env")]);
        let r = resolve(None, None, &e, &ws).unwrap();
        assert_eq!((r.identity.as_str(), r.team.as_str()), ("from-env", "t-env"));
        assert_eq!(r.team_source, Source::Env);

        let r = resolve(Some("flag"), Some("tflag"), &e, &ws).unwrap();
        assert_eq!((r.identity.as_str(), r.team.as_str()), ("flag", "tflag"));
        assert_eq!(r.identity_source, Source::Explicit);
    }

    #[test]
    fn broken_toml_is_ignored_and_bad_names_rejected() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(".atm.toml"), "[core\nidentity=").unwrap();
        let r = resolve(None, None, &env(&[]), root.path()).unwrap();
        assert_eq!(r.identity, "codex");
        assert!(matches!(
            resolve(Some(".."), None, &env(&[]), root.path()),
            Err(IdentityError::InvalidName { .. })
        ));
    }
}
