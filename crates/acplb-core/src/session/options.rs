//! The session's config options (model, reasoning effort, network access) as the editor
//! sees them, and how a `session/set_config_option` changes [`SessionSettings`].

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption,
};

use crate::provider::SessionSettings;

/// Config option id of the model picker.
pub const MODEL: &str = "model";
/// Config option id of the reasoning effort picker.
pub const REASONING_EFFORT: &str = "reasoning_effort";
/// Config option id of the network toggle.
pub const NETWORK_ACCESS: &str = "network_access";

/// The value meaning "whatever the provider's own configuration says".
pub const DEFAULT_VALUE: &str = "default";

/// Models and efforts a provider offers; the first entry of each is the provider default.
#[derive(Debug, Clone)]
pub struct OptionCatalog {
    /// `(slug, display name)` of each model.
    pub models: Vec<(String, String)>,
    /// Reasoning effort levels.
    pub efforts: Vec<String>,
}

/// Why a config option change was refused (an invalid-params error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionError {
    /// No option has that id.
    #[error("unknown config option `{0}`")]
    UnknownOption(String),
    /// The value is not one of the option's values.
    #[error("`{value}` is not a value of config option `{option}`")]
    BadValue {
        /// The option id.
        option: String,
        /// The refused value.
        value: String,
    },
}

impl OptionCatalog {
    /// The options as ACP config options, with current values from `settings`.
    pub fn options(&self, settings: &SessionSettings) -> Vec<SessionConfigOption> {
        let mut models = vec![SessionConfigSelectOption::new(
            DEFAULT_VALUE,
            "Default (from Codex config)",
        )];
        models.extend(
            self.models
                .iter()
                .map(|(slug, name)| SessionConfigSelectOption::new(slug.clone(), name.clone())),
        );
        let mut efforts = vec![SessionConfigSelectOption::new(DEFAULT_VALUE, "Default")];
        efforts.extend(
            self.efforts
                .iter()
                .map(|e| SessionConfigSelectOption::new(e.clone(), capitalize(e))),
        );
        vec![
            SessionConfigOption::select(MODEL, "Model", current(settings.model.as_ref()), models)
                .category(SessionConfigOptionCategory::Model)
                .description("The model Codex uses for the next turn."),
            SessionConfigOption::select(
                REASONING_EFFORT,
                "Reasoning effort",
                current(settings.reasoning_effort.as_ref()),
                efforts,
            )
            .category(SessionConfigOptionCategory::ThoughtLevel)
            .description("How long the model thinks before answering."),
            SessionConfigOption::boolean(NETWORK_ACCESS, "Network access", settings.network_access)
                .description(
                    "Lets sandboxed commands use the network in Auto mode (Full Access always has it).",
                ),
        ]
    }

    /// Applies one change to `settings`.
    pub fn apply(
        &self,
        settings: &mut SessionSettings,
        id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<(), OptionError> {
        let bad = |v: String| OptionError::BadValue {
            option: id.to_owned(),
            value: v,
        };
        match (id, value) {
            (NETWORK_ACCESS, SessionConfigOptionValue::Boolean { value }) => settings.network_access = *value,
            (MODEL, SessionConfigOptionValue::ValueId { value }) => {
                let v = value.to_string();
                if v != DEFAULT_VALUE && !self.models.iter().any(|(slug, _)| *slug == v) {
                    return Err(bad(v));
                }
                settings.model = (v != DEFAULT_VALUE).then_some(v);
            }
            (REASONING_EFFORT, SessionConfigOptionValue::ValueId { value }) => {
                let v = value.to_string();
                if v != DEFAULT_VALUE && !self.efforts.contains(&v) {
                    return Err(bad(v));
                }
                settings.reasoning_effort = (v != DEFAULT_VALUE).then_some(v);
            }
            (MODEL | REASONING_EFFORT | NETWORK_ACCESS, other) => {
                return Err(bad(serde_json::to_string(other).unwrap_or_default()));
            }
            (unknown, _) => return Err(OptionError::UnknownOption(unknown.to_owned())),
        }
        Ok(())
    }
}

fn current(value: Option<&String>) -> String {
    value.cloned().unwrap_or_else(|| DEFAULT_VALUE.to_owned())
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> OptionCatalog {
        OptionCatalog {
            models: vec![("gpt-5.5".into(), "GPT-5.5".into())],
            efforts: vec!["low".into(), "high".into()],
        }
    }

    #[test]
    fn options_show_current_values() {
        let s = SessionSettings {
            model: Some("gpt-5.5".into()),
            reasoning_effort: None,
            network_access: true,
        };
        let json = serde_json::to_value(catalog().options(&s)).unwrap();
        assert_eq!(json[0]["currentValue"], "gpt-5.5");
        assert_eq!(json[1]["currentValue"], "default");
        assert_eq!(json[2]["currentValue"], true);
        assert_eq!(json[0]["category"], "model");
    }

    #[test]
    fn apply_validates_ids_and_values() {
        let c = catalog();
        let mut s = SessionSettings::default();
        c.apply(
            &mut s,
            MODEL,
            &SessionConfigOptionValue::ValueId {
                value: "gpt-5.5".into(),
            },
        )
        .unwrap();
        assert_eq!(s.model.as_deref(), Some("gpt-5.5"));
        c.apply(
            &mut s,
            MODEL,
            &SessionConfigOptionValue::ValueId {
                value: "default".into(),
            },
        )
        .unwrap();
        assert_eq!(s.model, None);
        c.apply(&mut s, NETWORK_ACCESS, &SessionConfigOptionValue::boolean(true))
            .unwrap();
        assert!(s.network_access);
        assert!(matches!(
            c.apply(
                &mut s,
                REASONING_EFFORT,
                &SessionConfigOptionValue::ValueId { value: "max".into() }
            ),
            Err(OptionError::BadValue { .. })
        ));
        assert!(matches!(
            c.apply(&mut s, "colour", &SessionConfigOptionValue::boolean(true)),
            Err(OptionError::UnknownOption(_))
        ));
        assert!(matches!(
            c.apply(
                &mut s,
                NETWORK_ACCESS,
                &SessionConfigOptionValue::ValueId { value: "x".into() }
            ),
            Err(OptionError::BadValue { .. })
        ));
    }
}
