//! The models and reasoning efforts offered in the editor's pickers, and which model Codex
//! will use when the editor picks none.
//!
//! What is offered is what Codex's `model/list` says ([`from_list`]: asked when a session
//! opens, on either transport, ADR 0025). The list compiled in here ([`default_catalog`], the
//! user-visible entries of the catalog bundled with Codex 0.169.0) is only the fallback for a
//! Codex that cannot be asked. The model in use by default is read the way Codex reads it: a
//! `-c model=...` given to acplb, else `model` in `$CODEX_HOME/config.toml` (of the selected
//! profile, if any), else the model Codex lists as its default (else, without a list, Codex
//! 0.169.0's built-in default).

use std::path::{Path, PathBuf};

use acplb_core::session::options::{OptionCatalog, Recommended};

/// The model Codex 0.169.0 uses with no configuration (seen in `thread/start`'s answer).
pub const BUILTIN_DEFAULT_MODEL: &str = "gpt-6.1-sol";

/// One model as Codex's `model/list` offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedModel {
    pub(crate) slug: String,
    pub(crate) name: String,
    /// The reasoning efforts it supports, in Codex's order.
    pub(crate) efforts: Vec<String>,
    /// Codex's default model when none is configured.
    pub(crate) is_default: bool,
    /// The effort Codex uses with it by default (`defaultReasoningEffort`).
    pub(crate) default_effort: Option<String>,
}

/// The fallback catalog (Codex could not be asked), with the default model as `CODEX_HOME`
/// and the `-c` overrides acplb passes to Codex say.
pub fn catalog(overrides: &[String]) -> OptionCatalog {
    let mut catalog = default_catalog();
    catalog.default_model = Some(
        configured_model(overrides, codex_home().as_deref())
            .unwrap_or_else(|| BUILTIN_DEFAULT_MODEL.to_owned()),
    );
    catalog
}

/// What `model/list` offers, on top of `base` (its agent, what it asks and steers): the listed
/// models with their efforts, the `configured` model kept (first) even when the list lacks it.
/// A model the list does not name is offered every effort the list has.
pub(crate) fn from_list(
    base: &OptionCatalog,
    listed: &[ListedModel],
    configured: Option<String>,
) -> OptionCatalog {
    let mut efforts: Vec<String> = Vec::new();
    for effort in listed.iter().flat_map(|m| &m.efforts) {
        if !efforts.contains(effort) {
            efforts.push(effort.clone());
        }
    }
    let default_model = configured
        .or_else(|| listed.iter().find(|m| m.is_default).map(|m| m.slug.clone()))
        .or_else(|| listed.first().map(|m| m.slug.clone()));
    OptionCatalog {
        models: listed.iter().map(|m| (m.slug.clone(), m.name.clone())).collect(),
        efforts,
        model_efforts: listed
            .iter()
            .filter(|m| !m.efforts.is_empty())
            .map(|m| (m.slug.clone(), m.efforts.clone()))
            .collect(),
        default_model,
        recommended: Recommended {
            model: listed.iter().find(|m| m.is_default).map(|m| m.slug.clone()),
            efforts: listed
                .iter()
                .filter_map(|m| Some((m.slug.clone(), m.default_effort.clone()?)))
                .collect(),
        },
        ..base.clone()
    }
}

/// The model configured for Codex (`-c model=`, else its `config.toml`), read as Codex reads
/// it; `None` when nothing names one. Reads a file: call it off the runtime thread.
pub(crate) fn configured(overrides: &[String]) -> Option<String> {
    configured_model(overrides, codex_home().as_deref())
}

/// The catalog compiled in from Codex 0.169.0: the fallback when Codex cannot be asked.
pub fn default_catalog() -> OptionCatalog {
    let models = [
        ("gpt-5.5", "GPT-5.5"),
        ("gpt-5.6-sol", "GPT-5.6 Sol"),
        ("gpt-5.6-terra", "GPT-5.6 Terra"),
        ("gpt-5.6-luna", "GPT-5.6 Luna"),
        ("gpt-6-sol", "GPT-6 Sol"),
        ("gpt-6-luna", "GPT-6 Luna"),
        ("gpt-6-astra", "GPT-6 Astra"),
        ("gpt-6.1-sol", "GPT-6.1 Sol"),
        ("gpt-6.1-terra", "GPT-6.1 Terra"),
    ];
    OptionCatalog {
        models: models
            .iter()
            .map(|(s, n)| ((*s).to_owned(), (*n).to_owned()))
            .collect(),
        efforts: ["low", "medium", "high", "xhigh"]
            .iter()
            .map(|e| (*e).to_owned())
            .collect(),
        model_efforts: Vec::new(),
        default_model: None,
        agent: "Codex".to_owned(),
        asks: false,
        steer: false,
        // Set per session from what the client declared.
        booleans: false,
        mode_meta: acplb_core::session::options::ModeMeta::Plain,
        // Offered where the transport can plan (app-server).
        refuses_plan: Some(crate::options::PLAN_REFUSAL.to_owned()),
        provider_modes: Vec::new(),
        initial_mode: None,
        recommended: acplb_core::session::options::Recommended::default(),
        recommendations: acplb_core::session::options::Recommendations::Hidden,
    }
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

/// The model Codex will use: the last `-c model=...`, else the config file.
fn configured_model(overrides: &[String], codex_home: Option<&Path>) -> Option<String> {
    let from_flags = overrides.iter().rev().find_map(|o| {
        let (key, value) = o.split_once('=')?;
        (key.trim() == "model").then(|| unquote(value.trim()))
    });
    from_flags.or_else(|| codex_home.and_then(model_in_config))
}

/// `model` from `config.toml`, honouring `profile`. A missing or unreadable file is no error
/// here: Codex reports a broken config itself when it starts.
fn model_in_config(codex_home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(codex_home.join("config.toml")).ok()?;
    let config: toml::Table = match text.parse() {
        Ok(c) => c,
        Err(e) => {
            tracing::debug!(error = %e, "cannot read Codex's config.toml for its model");
            return None;
        }
    };
    let profile_model = config
        .get("profile")
        .and_then(|p| p.as_str())
        .and_then(|p| config.get("profiles")?.get(p)?.get("model")?.as_str());
    profile_model
        .or_else(|| config.get("model")?.as_str())
        .map(str::to_owned)
}

/// A `-c` value is TOML: `"gpt-5.5"` or a bare `gpt-5.5`.
fn unquote(value: &str) -> String {
    value
        .parse::<toml::Value>()
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_in_use_follows_flags_then_profile_then_config_then_builtin() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(configured_model(&[], Some(home.path())), None);
        std::fs::write(home.path().join("config.toml"), "model = \"gpt-5.5\"\n").unwrap();
        assert_eq!(
            configured_model(&[], Some(home.path())).as_deref(),
            Some("gpt-5.5")
        );
        std::fs::write(
            home.path().join("config.toml"),
            "model = \"gpt-5.5\"\nprofile = \"deep\"\n[profiles.deep]\nmodel = \"gpt-6-astra\"\n",
        )
        .unwrap();
        assert_eq!(
            configured_model(&[], Some(home.path())).as_deref(),
            Some("gpt-6-astra")
        );
        let flags = [
            "model=\"gpt-6-luna\"".to_owned(),
            "model_reasoning_effort=high".to_owned(),
        ];
        assert_eq!(
            configured_model(&flags, Some(home.path())).as_deref(),
            Some("gpt-6-luna")
        );
        assert_eq!(
            configured_model(&["model=my-model".into()], None).as_deref(),
            Some("my-model")
        );
        std::fs::write(home.path().join("config.toml"), "model = [broken").unwrap();
        assert_eq!(configured_model(&[], Some(home.path())), None);
    }

    fn listed(slug: &str, efforts: &[&str], is_default: bool) -> ListedModel {
        ListedModel {
            slug: slug.into(),
            name: slug.to_uppercase(),
            efforts: efforts.iter().map(|e| (*e).to_owned()).collect(),
            is_default,
            default_effort: efforts.first().map(|e| (*e).to_owned()),
        }
    }

    #[test]
    fn the_listed_models_are_offered_with_their_efforts_and_the_configured_one_kept() {
        let list = [
            listed("alpha", &["low", "medium"], false),
            listed("gamma", &["high"], true),
        ];
        let live = from_list(&default_catalog(), &list, Some("gpt-5.5".into()));
        assert_eq!(
            live.models,
            [("alpha".into(), "ALPHA".into()), ("gamma".into(), "GAMMA".into())]
        );
        assert_eq!(live.default_model.as_deref(), Some("gpt-5.5"));
        assert_eq!(live.efforts, ["low", "medium", "high"]);
        assert_eq!(live.model_efforts[1], ("gamma".into(), vec!["high".to_owned()]));
        assert_eq!(live.agent, "Codex");
        assert_eq!(
            live.recommended.model.as_deref(),
            Some("gamma"),
            "Codex's default"
        );
        assert_eq!(
            live.recommended.efforts,
            [("alpha".into(), "low".into()), ("gamma".into(), "high".into())]
        );
        let unconfigured = from_list(&default_catalog(), &list, None);
        assert_eq!(
            unconfigured.default_model.as_deref(),
            Some("gamma"),
            "Codex's default"
        );
    }
}
