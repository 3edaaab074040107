//! The modes a session can be in: acplb's own (`permission.rs`) and those a provider adds
//! beside them (Codex's permission profiles), as ACP session modes and as values of the `mode`
//! config option; which one a session is in, and choosing one (ADR 0038).
//!
//! A provider mode is a name the provider gives meaning to: the session remembers its id in
//! [`SessionSettings::provider_mode`] and runs on [`PROVIDER_MODE_BASE`] wherever only acplb's
//! own modes are understood, so code that knows nothing of it errs on the narrow side. A
//! provider learns its modes behind a session's opening ([`ProviderModes`]): they are values of
//! the `mode` option from then on (ACP has no update of the modes a session offers, only of its
//! config options), and ACP modes of every later answer for the session.

use agent_client_protocol::v1::schema::{Meta, SessionConfigSelectOption, SessionMode, SessionModeState};

use super::options::OptionCatalog;
use crate::permission::Mode;
use crate::provider::SessionSettings;

/// A mode the provider offers beside acplb's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderMode {
    /// The ACP mode id (never one of acplb's own).
    pub id: String,
    /// Its name in the mode picker.
    pub name: String,
    /// One sentence for the mode picker.
    pub description: String,
}

/// What a provider knows of the modes it adds to one session, as it learns them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderModes {
    /// Still being asked.
    Asking,
    /// These (maybe none).
    Listed(Vec<ProviderMode>),
    /// The provider cannot say; why, as a sentence for the user.
    Unavailable(String),
}

impl ProviderModes {
    /// The modes listed so far (none while asking, or when unavailable).
    pub fn listed(&self) -> Vec<ProviderMode> {
        match self {
            ProviderModes::Listed(listed) => listed.clone(),
            ProviderModes::Asking | ProviderModes::Unavailable(_) => Vec::new(),
        }
    }
}

/// The mode a session in a provider mode is, for everything that knows only acplb's own: the
/// narrowest one that asks before more.
pub const PROVIDER_MODE_BASE: Mode = Mode::ReadOnly;

/// Why a mode id cannot be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModeRefusal {
    /// No offered mode has that id; the ids there are, listed.
    Unknown(String),
    /// The mode exists but this provider cannot offer it; why, as the provider says it.
    Unavailable(String),
}

/// A chosen mode: acplb's own, and the provider mode it stands for, if any.
pub type Chosen = (Mode, Option<String>);

impl OptionCatalog {
    /// The id of the mode a session with `settings` and `mode` is in.
    pub fn current_mode_id(&self, settings: &SessionSettings, mode: Mode) -> String {
        settings
            .provider_mode
            .clone()
            .unwrap_or_else(|| mode.id().to_owned())
    }

    /// Every offered mode as `(id, name, description, meta)`: acplb's own, then the
    /// provider's; `meta` is the AIR kind of the mode for an AIR client (ADR 0049).
    fn choices(&self) -> Vec<(String, String, String, Option<Meta>)> {
        let own = self.offered().map(|m| {
            let kind = air_kind(m).filter(|_| self.mode_meta == super::options::ModeMeta::Air);
            let meta = kind.map(|k| crate::capabilities::air_meta("kind", k.into()));
            (
                m.id().to_owned(),
                m.name().to_owned(),
                self.mode_description(m),
                meta,
            )
        });
        let added = self
            .provider_modes
            .iter()
            .map(|m| (m.id.clone(), m.name.clone(), m.description.clone(), None));
        own.chain(added).collect()
    }

    /// The ACP session modes, the current one from `settings` and `mode`.
    pub fn modes(&self, settings: &SessionSettings, mode: Mode) -> SessionModeState {
        SessionModeState::new(
            self.current_mode_id(settings, mode),
            self.choices()
                .into_iter()
                .map(|(id, name, description, meta)| {
                    SessionMode::new(id, name).description(description).meta(meta)
                })
                .collect::<Vec<_>>(),
        )
    }

    /// The values of the `mode` config option.
    pub(crate) fn mode_values(&self) -> Vec<SessionConfigSelectOption> {
        self.choices()
            .into_iter()
            .map(|(id, name, description, meta)| {
                SessionConfigSelectOption::new(id, name)
                    .description(description)
                    .meta(meta)
            })
            .collect()
    }

    /// The mode `id` names, or why it cannot be chosen.
    pub fn choose_mode(&self, id: &str) -> Result<Chosen, ModeRefusal> {
        match Mode::from_id(id) {
            Some(Mode::Plan) if self.refuses_plan.is_some() => Err(ModeRefusal::Unavailable(
                self.refuses_plan.clone().unwrap_or_default(),
            )),
            Some(mode) => Ok((mode, None)),
            None if self.provider_modes.iter().any(|m| m.id == id) => {
                Ok((PROVIDER_MODE_BASE, Some(id.to_owned())))
            }
            None => {
                let ids: Vec<String> = self.choices().into_iter().map(|(id, ..)| id).collect();
                Err(ModeRefusal::Unknown(ids.join(", ")))
            }
        }
    }

    /// The mode `id` names (for `session/set_mode`), or the message of its refusal.
    pub fn mode(&self, id: &str) -> Result<Chosen, String> {
        self.choose_mode(id).map_err(|refusal| match refusal {
            ModeRefusal::Unavailable(why) => format!("mode `{id}` is not available: {why}"),
            ModeRefusal::Unknown(ids) => format!("unknown mode `{id}`; the modes are {ids}"),
        })
    }
}

/// The kind AIR gives a mode as the TS peer names them: `standard` for one that asks the user
/// (read-only, auto), `full_access` for no sandbox; none for plan (the peer's plan is a
/// collaboration mode, not a mode) nor for a provider's modes (the peer's permission profiles
/// have none).
fn air_kind(mode: Mode) -> Option<&'static str> {
    match mode {
        Mode::ReadOnly | Mode::Auto => Some("standard"),
        Mode::FullAccess => Some("full_access"),
        Mode::Plan => None,
    }
}

/// Sets a session to a chosen mode.
pub fn enter(chosen: Chosen, settings: &mut SessionSettings, mode: &mut Mode) {
    let (own, provider) = chosen;
    *mode = own;
    settings.provider_mode = provider;
}
