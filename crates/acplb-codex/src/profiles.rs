//! Codex's permission profiles as session modes (ADR 0038): a profile `<id>` the user defined
//! in Codex's configuration (`[permissions.<id>]`) is the mode `permission-profile:<id>`, next
//! to acplb's own. Codex's built-in profiles (`:read-only`, `:workspace`,
//! `:danger-full-access`) are acplb's own modes already and are not offered twice. Only the
//! app-server can run a turn in a profile (`turn/start.permissions`); exec offers none.

use acplb_core::provider::SessionSettings;
use acplb_core::session::modes::ProviderMode;

use crate::render::one_line;

/// What a profile's mode id starts with (the TS codex-acp's spelling, so a user's
/// `INITIAL_AGENT_MODE` value works as `ACPLB_INITIAL_MODE` too).
pub(crate) const PREFIX: &str = "permission-profile:";

/// The most profiles offered (a configuration with more is cut, with a warning).
pub(crate) const MAX_PROFILES: usize = 64;

/// The longest profile id offered, in bytes.
const MAX_ID: usize = 128;

/// The longest description shown, in characters.
const MAX_DESCRIPTION: usize = 200;

/// One profile as Codex lists it (`permissionProfile/list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedProfile {
    pub(crate) id: String,
    pub(crate) description: Option<String>,
    /// Whether Codex lets the user select it (its requirements, a profile that cannot resolve).
    pub(crate) allowed: bool,
}

/// The profile a session's turn runs in, when it is in one.
pub(crate) fn of(settings: &SessionSettings) -> Option<&str> {
    settings.provider_mode.as_deref()?.strip_prefix(PREFIX)
}

/// The modes of the profiles Codex listed: the user's own that Codex allows, in its order;
/// what is left out is logged.
pub(crate) fn modes(listed: &[ListedProfile]) -> Vec<ProviderMode> {
    let mut modes = Vec::new();
    for profile in listed {
        let id = profile.id.as_str();
        if id.starts_with(':') {
            continue;
        }
        if !profile.allowed {
            tracing::warn!(profile = %id, "codex does not allow permission profile `{id}` (its requirements, or a profile it cannot resolve); not offered");
            continue;
        }
        if id.is_empty() || id.len() > MAX_ID || id.chars().any(char::is_control) {
            tracing::warn!(
                bytes = id.len(),
                "a permission profile id acplb cannot show; not offered"
            );
            continue;
        }
        if modes.len() == MAX_PROFILES {
            tracing::warn!(
                listed = listed.len(),
                "more than {MAX_PROFILES} permission profiles; the rest not offered"
            );
            break;
        }
        let description = profile
            .description
            .as_deref()
            .map(|d| one_line(d, MAX_DESCRIPTION))
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| format!("Codex runs commands under your permission profile `{id}` and asks before anything it forbids."));
        modes.push(ProviderMode {
            id: format!("{PREFIX}{id}"),
            name: format!("Profile: {id}"),
            description,
        });
    }
    modes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: &str, description: Option<&str>, allowed: bool) -> ListedProfile {
        ListedProfile {
            id: id.into(),
            description: description.map(str::to_owned),
            allowed,
        }
    }

    #[test]
    fn user_profiles_become_modes_and_built_ins_refused_and_odd_ones_do_not() {
        let modes = modes(&[
            listed(":read-only", None, true),
            listed("locked", Some("Nothing\nwritten"), true),
            listed("banned", None, false),
            listed("bad\u{7}", None, true),
            listed("builder", None, true),
        ]);
        let ids: Vec<&str> = modes.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["permission-profile:locked", "permission-profile:builder"]);
        assert_eq!(modes[0].name, "Profile: locked");
        assert!(!modes[0].description.contains('\n'), "{}", modes[0].description);
        assert!(modes[1].description.contains("`builder`"));
        let many: Vec<ListedProfile> = (0..100).map(|i| listed(&format!("p{i}"), None, true)).collect();
        assert_eq!(super::modes(&many).len(), MAX_PROFILES);
    }

    #[test]
    fn the_profile_of_a_session() {
        let mut s = SessionSettings::default();
        assert_eq!(of(&s), None);
        s.provider_mode = Some("permission-profile:locked".into());
        assert_eq!(of(&s), Some("locked"));
    }
}
