//! The agent-team plugins of `composer.toml` (`atm-identity`, `atm-mail`, `audit`) and the
//! registry that offers them to acplb.
//!
//! Building a plugin (also what `acplb config check` does) only resolves values (it may read
//! `.atm.toml`); locks, logs and MCP servers are touched when a session starts. Both run on the
//! blocking pool. The plugins cooperate in one order,
//! `atm-identity` first:
//!
//! - `atm-identity` claims the identity and exports `ATM_IDENTITY` / `ATM_TEAM` (and `ATM_HOME`
//!   when its `atm_home` is set) into the session's provider environment;
//! - `atm-mail` reads those back from [`SessionStart::env`](acplb_core::plugin::SessionStart) to
//!   register `acplb mcp atm --identity <claimed> --no-claim`; without `atm-identity` it resolves
//!   the identity itself and the MCP server claims it;
//! - `audit` and `atm-mail` may come in either order: whichever is built second sees the other
//!   in [`BuildContext::earlier`] and passes the audit log to the MCP server.
//!
//! `atm-identity` after either of the others is refused when it is built, because they would
//! already have settled on an unclaimed identity.

mod audit;
mod identity;
mod mail;

use std::path::PathBuf;
use std::sync::Arc;

use acplb_core::plugin::SessionStart;
use acplb_core::plugin::registry::{BuildContext, Registry};
use acplb_core::provider::TurnRequest;

pub use audit::{Audit, AuditFactory};
pub use identity::{AtmIdentity, AtmIdentityFactory};
pub use mail::{AtmMail, AtmMailFactory};

use crate::env::{EnvSource, ProcessEnv};

/// The id of the identity plugin.
pub const ATM_IDENTITY: &str = "atm-identity";
/// The id of the mail plugin.
pub const ATM_MAIL: &str = "atm-mail";
/// The id of the audit plugin.
pub const AUDIT: &str = "audit";

/// Every built-in plugin, reading the process environment.
pub fn registry() -> Registry {
    registry_with_env(Arc::new(ProcessEnv))
}

/// Every built-in plugin, reading `env` instead of the process environment (for tests).
pub fn registry_with_env(env: Arc<dyn EnvSource>) -> Registry {
    registry_for(env, None)
}

/// The plugins over `env`, with every session's `atm-identity` identity set to `identity`
/// when given (`acplb mcp codex --identity`).
pub fn registry_for(env: Arc<dyn EnvSource>, identity: Option<String>) -> Registry {
    Registry::default()
        .with(AtmIdentityFactory::new(Arc::clone(&env)).with_identity(identity))
        .with(AtmMailFactory::new(Arc::clone(&env)))
        .with(AuditFactory::new(env))
}

/// Variables a plugin sets in [`SessionStart::env`] for Codex, which later plugins read back.
pub(crate) mod vars {
    /// The claimed identity.
    pub(crate) const IDENTITY: &str = "ATM_IDENTITY";
    /// The team.
    pub(crate) const TEAM: &str = "ATM_TEAM";
    /// ATM's home directory (holds `.claude/` and `.config/atm/`).
    pub(crate) const HOME: &str = "ATM_HOME";
}

/// Adds `note` to this turn's developer instructions and, when it is `news` the model must see
/// in this very turn (not only where the conversation starts), to the turn's notes, which the
/// provider delivers on a continued conversation in its own way.
pub(crate) fn add_turn_note(turn: &mut TurnRequest, note: String, news: bool) {
    if news {
        turn.notes.push(note.clone());
    }
    turn.developer_instructions.push(note);
}

/// The last value of `key` in the session's provider environment.
pub(crate) fn start_var<'a>(start: &'a SessionStart, key: &str) -> Option<&'a str> {
    start
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Sets `key` in the session's provider environment, replacing an earlier value.
pub(crate) fn set_start_var(start: &mut SessionStart, key: &str, value: &str) {
    start.env.retain(|(k, _)| k != key);
    start.env.push((key.to_owned(), value.to_owned()));
}

/// The session's provider environment in front of the process environment: what a plugin sees
/// once earlier plugins exported variables (an `atm_home` parameter, say).
pub(crate) struct Layered<'a> {
    pub(crate) first: &'a [(String, String)],
    pub(crate) then: &'a dyn EnvSource,
}

impl EnvSource for Layered<'_> {
    fn var(&self, key: &str) -> Option<String> {
        self.first
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
            .or_else(|| self.then.var(key))
    }
}

/// Where a value resolved by [`crate::identity::resolve`] came from, as `config check` shows it.
pub(crate) fn origin_of(source: &crate::identity::Source, param_origin: Option<&str>, var: &str) -> String {
    use crate::identity::Source;
    match source {
        Source::Explicit => param_origin.unwrap_or("composer.toml").to_owned(),
        Source::Env => format!("env {var}"),
        Source::AtmToml(path) => format!(".atm.toml ({})", path.display()),
        Source::Default => "default".to_owned(),
    }
}

/// ATM's home directory and where it came from: the `atm_home` value an earlier plugin
/// resolved, else `ATM_HOME`, else `HOME`.
pub(crate) fn atm_home(ctx: &BuildContext, env: &dyn EnvSource) -> Option<(PathBuf, String)> {
    if let Some(r) = ctx.earlier_value(ATM_IDENTITY, "atm_home") {
        return Some((PathBuf::from(&r.value), r.origin.clone()));
    }
    env.var(vars::HOME)
        .map(|h| (PathBuf::from(h), "env ATM_HOME".to_owned()))
        .or_else(|| env.var("HOME").map(|h| (PathBuf::from(h), "env HOME".to_owned())))
}

#[cfg(test)]
mod tests;
