//! `atm-identity`: who the session is in its agent team. Resolves and claims the identity,
//! exports it to Codex, and adds a fresh `<session-context>` block to every turn.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

use acplb_core::plugin::registry::{
    BuildContext, Built, ParamKind, ParamSpec, PluginFactory, PluginParams, Resolved,
};
use acplb_core::plugin::{Plugin, PromptContext, SessionStart, TeamIdentity};
use acplb_core::provider::TurnRequest;

use super::{ATM_IDENTITY, ATM_MAIL, AUDIT, Layered, add_turn_note, origin_of, set_start_var, vars};
use crate::context::session_context;
use crate::env::EnvSource;
use crate::identity::{ResolvedIdentity, SharedClaim, resolve};

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "identity",
        kind: ParamKind::String,
        doc: "the agent name (else `ATM_IDENTITY`, else `[core] identity` of `.atm.toml`, else `codex`)",
    },
    ParamSpec {
        name: "team",
        kind: ParamKind::String,
        doc: "the team (else `ATM_TEAM`, else `[core] default_team` of `.atm.toml`, else `default`)",
    },
    ParamSpec {
        name: "atm_home",
        kind: ParamKind::DirPath,
        doc: "ATM's home directory, holding `.claude/teams` and `.config/atm` (else `ATM_HOME`, else `HOME`; a workspace's own composer.toml may only name one inside the workspace)",
    },
    ParamSpec {
        name: "exclusive",
        kind: ParamKind::Bool,
        doc: "when another live process holds the identity, fail instead of taking `<identity>-2` (what `acplb worker` uses; default false)",
    },
];

/// Builds [`AtmIdentity`] plugins.
pub struct AtmIdentityFactory {
    env: Arc<dyn EnvSource>,
    /// An identity the program was told (`acplb mcp codex --identity`): it takes the place
    /// of composer.toml's `identity` and of the environment.
    identity: Option<String>,
}

impl std::fmt::Debug for AtmIdentityFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AtmIdentityFactory")
    }
}

impl AtmIdentityFactory {
    /// A factory resolving against `env`.
    pub fn new(env: Arc<dyn EnvSource>) -> Self {
        Self { env, identity: None }
    }

    /// The same factory with every session's identity set to `identity` (an explicit
    /// `--identity`), whatever composer.toml or the environment says.
    #[must_use]
    pub fn with_identity(mut self, identity: Option<String>) -> Self {
        self.identity = identity;
        self
    }
}

impl PluginFactory for AtmIdentityFactory {
    fn id(&self) -> &'static str {
        ATM_IDENTITY
    }

    fn description(&self) -> &'static str {
        "claims the session's agent-team identity, exports ATM_IDENTITY/ATM_TEAM to Codex and adds a <session-context> block to every turn"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn check_value(&self, name: &str, value: &toml::Value) -> Result<(), String> {
        match (name, value.as_str()) {
            // The rule every inbox and lock name follows.
            ("identity" | "team", Some(s)) if crate::names::sanitize(s).is_err() => {
                Err("must be a name: not empty, and without `..`".into())
            }
            _ => Ok(()),
        }
    }

    fn build(&self, params: &PluginParams, ctx: &BuildContext) -> Result<Built, String> {
        if let Some(later) = [ATM_MAIL, AUDIT].into_iter().find(|id| ctx.built_earlier(id)) {
            return Err(format!(
                "`{ATM_IDENTITY}` must come before `{later}` in composer.toml: `{later}` needs the claimed identity"
            ));
        }
        let home_param = params
            .str("atm_home")
            .map(|h| (vars::HOME.to_owned(), h.to_owned()));
        let overlay: Vec<(String, String)> = home_param.iter().cloned().collect();
        let env = Layered {
            first: &overlay,
            then: self.env.as_ref(),
        };
        if let Some(name) = &self.identity {
            crate::names::sanitize(name).map_err(|e| format!("--identity `{name}`: {e}"))?;
        }
        let requested = self.identity.as_deref().or(params.str("identity"));
        let resolved = resolve(requested, params.str("team"), &env, &ctx.cwd).map_err(|e| e.to_string())?;
        let sessions_dir = crate::env::agent_sessions_dir(&env, &resolved.team).ok_or_else(|| {
            "cannot place the identity lock: set `atm_home`, `ATM_HOME` or `HOME`".to_owned()
        })?;
        let home_origin = if home_param.is_some() {
            params.origin("atm_home").unwrap_or("composer.toml").to_owned()
        } else if env.var(vars::HOME).is_some() {
            "env ATM_HOME".to_owned()
        } else {
            "env HOME".to_owned()
        };
        let home = crate::env::atm_home(&env).unwrap_or_default();
        let identity_origin = if self.identity.is_some() {
            "--identity".to_owned()
        } else {
            origin_of(
                &resolved.identity_source,
                params.origin("identity"),
                vars::IDENTITY,
            )
        };
        let report = vec![
            Resolved {
                key: "identity".into(),
                value: resolved.identity.clone(),
                origin: identity_origin.clone(),
            },
            Resolved {
                key: "team".into(),
                value: resolved.team.clone(),
                origin: origin_of(&resolved.team_source, params.origin("team"), vars::TEAM),
            },
            Resolved {
                key: "atm_home".into(),
                value: home.display().to_string(),
                origin: home_origin,
            },
            Resolved {
                key: "lock".into(),
                value: sessions_dir
                    .join(format!("{}.lock", resolved.identity))
                    .display()
                    .to_string(),
                origin: "derived; shared by the sessions of this acplb; `<identity>-2`, `-3`, ... when another live process holds it".into(),
            },
        ];
        Ok(Built {
            plugin: Box::new(AtmIdentity {
                resolved,
                identity_origin,
                sessions_dir,
                exported_home: params.str("atm_home").map(str::to_owned),
                exclusive: params.bool("exclusive").unwrap_or(false),
                claim: RefCell::new(None),
                delivered: RefCell::new(None),
            }),
            resolved: report,
        })
    }
}

/// The identity of one session. Sessions of one process share the claim (an acplb process is
/// one team member); this session's share lives as long as its pipeline, and the claim ends
/// with the last session or the process.
#[derive(Debug)]
pub struct AtmIdentity {
    resolved: ResolvedIdentity,
    identity_origin: String,
    sessions_dir: PathBuf,
    exported_home: Option<String>,
    /// A held name is an error, not a suffix (workers).
    exclusive: bool,
    claim: RefCell<Option<SharedClaim>>,
    /// The block the model last received.
    delivered: RefCell<Option<String>>,
}

impl AtmIdentity {
    /// The claimed name once the session started, else the requested one.
    fn name(&self) -> String {
        self.claim
            .borrow()
            .as_ref()
            .map_or_else(|| self.resolved.identity.clone(), |c| c.name().to_owned())
    }
}

impl Plugin for AtmIdentity {
    fn session_start(&self, start: &mut SessionStart) -> Result<(), String> {
        let claim = if self.exclusive {
            SharedClaim::acquire_exact(&self.sessions_dir, &self.resolved.identity)
        } else {
            SharedClaim::acquire(&self.sessions_dir, &self.resolved.identity)
        }
        .map_err(|e| e.to_string())?;
        tracing::info!(
            session = %start.session_id,
            identity = claim.name(),
            requested = %self.resolved.identity,
            // `env ATM_IDENTITY` here may be the launcher's own name (see ADR 0005).
            from = %self.identity_origin,
            team = %self.resolved.team,
            lock = %claim.path().display(),
            "atm identity claimed"
        );
        set_start_var(start, vars::IDENTITY, claim.name());
        set_start_var(start, vars::TEAM, &self.resolved.team);
        start.identity = Some(TeamIdentity {
            name: claim.name().to_owned(),
            team: self.resolved.team.clone(),
        });
        if let Some(home) = &self.exported_home {
            set_start_var(start, vars::HOME, home);
        }
        *self.claim.borrow_mut() = Some(claim);
        Ok(())
    }

    fn session_closed(&self, session: &acplb_core::plugin::SessionId) -> Option<tokio::task::JoinHandle<()>> {
        // This session's share of the claim ends now (`session/close`), not when the last
        // reference to its pipeline goes; the claim itself ends with the process's last share.
        let claim = self.claim.borrow_mut().take()?;
        tracing::info!(%session, identity = %self.resolved.identity, "atm identity released by this session");
        // The last share removes the lock file, under the lock that a claim being made on a
        // stalled disk may hold: off the runtime thread, and the close waits for it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            Some(runtime.spawn_blocking(move || drop(claim)))
        } else {
            drop(claim);
            None
        }
    }

    fn prompt(&self, ctx: &PromptContext, turn: &mut TurnRequest) -> Result<(), String> {
        // Computed now, not at session start: a branch switched between prompts shows up.
        let block = session_context(&self.name(), &self.resolved.team, &ctx.cwd);
        // A continued conversation still shows the model the block of its first turn, so a
        // changed block is news for this turn.
        let changed = self.delivered.borrow().as_deref() != Some(block.as_str());
        *self.delivered.borrow_mut() = Some(block.clone());
        add_turn_note(turn, block, changed);
        Ok(())
    }
}
