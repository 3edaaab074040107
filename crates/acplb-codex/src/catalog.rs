//! The models and reasoning efforts offered in the editor's pickers, and which model Codex
//! will use when the editor picks none.
//!
//! These are the user-visible entries of the model catalog bundled with Codex 0.169.0
//! (`codex debug models`), so `session/new` can answer without starting Codex. The model in use
//! by default is read the way Codex reads it: a `-c model=...` given to acplb, else `model` in
//! `$CODEX_HOME/config.toml` (of the selected profile, if any), else Codex's built-in default.

use std::path::{Path, PathBuf};

use acplb_core::session::options::OptionCatalog;

/// The model Codex 0.169.0 uses with no configuration (seen in `thread/start`'s answer).
pub const BUILTIN_DEFAULT_MODEL: &str = "gpt-6.1-sol";

/// The catalog of the pinned Codex version, with the default model as `CODEX_HOME` and the
/// `-c` overrides acplb passes to Codex say.
pub fn catalog(overrides: &[String]) -> OptionCatalog {
    let mut catalog = default_catalog();
    catalog.default_model = Some(configured_model(overrides, codex_home().as_deref()));
    catalog
}

/// The catalog of the pinned Codex version, without knowing the default model.
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
        default_model: None,
        agent: "Codex".to_owned(),
        asks: false,
        steer: false,
        // Set per session from what the client declared.
        booleans: false,
    }
}

/// `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")))
}

/// The model Codex will use: the last `-c model=...`, else the config file, else the built-in.
fn configured_model(overrides: &[String], codex_home: Option<&Path>) -> String {
    let from_flags = overrides.iter().rev().find_map(|o| {
        let (key, value) = o.split_once('=')?;
        (key.trim() == "model").then(|| unquote(value.trim()))
    });
    from_flags
        .or_else(|| codex_home.and_then(model_in_config))
        .unwrap_or_else(|| BUILTIN_DEFAULT_MODEL.to_owned())
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
        assert_eq!(configured_model(&[], Some(home.path())), BUILTIN_DEFAULT_MODEL);
        std::fs::write(home.path().join("config.toml"), "model = \"gpt-5.5\"\n").unwrap();
        assert_eq!(configured_model(&[], Some(home.path())), "gpt-5.5");
        std::fs::write(
            home.path().join("config.toml"),
            "model = \"gpt-5.5\"\nprofile = \"deep\"\n[profiles.deep]\nmodel = \"gpt-6-astra\"\n",
        )
        .unwrap();
        assert_eq!(configured_model(&[], Some(home.path())), "gpt-6-astra");
        let flags = [
            "model=\"gpt-6-luna\"".to_owned(),
            "model_reasoning_effort=high".to_owned(),
        ];
        assert_eq!(configured_model(&flags, Some(home.path())), "gpt-6-luna");
        assert_eq!(configured_model(&["model=my-model".into()], None), "my-model");
        std::fs::write(home.path().join("config.toml"), "model = [broken").unwrap();
        assert_eq!(configured_model(&[], Some(home.path())), BUILTIN_DEFAULT_MODEL);
    }
}
