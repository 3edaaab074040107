//! The session's config options (mode, model, reasoning effort, network access) as the editor
//! sees them, and how a `session/set_config_option` changes the session.
//!
//! The mode is offered twice, as ACP session modes and as a `mode` config option, because some
//! clients (acpx) only know config options; the two always show the same value. Values come as
//! the editor sends them: a boolean option also takes the strings `true`/`false` (and
//! `on`/`off`, `yes`/`no`, `1`/`0`), which is what command-line clients send.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption,
};

use super::modes::{ModeRefusal, ProviderMode};
pub use super::recommended::{AIR_RECOMMENDED_VALUE, Recommendations, Recommended};
use crate::permission::Mode;
use crate::provider::{SessionSettings, WhileBusy};

/// Config option id of the mode picker (the same modes as `session/set_mode`).
pub const MODE: &str = "mode";
/// Config option id of the model picker.
pub const MODEL: &str = "model";
/// Config option id of the reasoning effort picker.
pub const REASONING_EFFORT: &str = "reasoning_effort";
/// Config option id of the network toggle.
pub const NETWORK_ACCESS: &str = "network_access";
/// Config option id of "a prompt sent while busy": queue or steer (only where the provider steers).
pub const WHILE_BUSY: &str = "while_busy";

/// The value meaning "whatever the provider's own configuration says".
pub const DEFAULT_VALUE: &str = "default";

/// What a mode carries beside its id, name and description.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ModeMeta {
    /// Nothing.
    #[default]
    Plain,
    /// Its kind as `JetBrains` AIR names it, in `_meta.jetbrains.air.kind` (ADR 0049).
    Air,
}

impl ModeMeta {
    /// `Air` for a client that is AIR.
    pub fn for_client(client: &agent_client_protocol::v1::schema::ClientCapabilities) -> Self {
        if crate::capabilities::air(client).is_some() {
            ModeMeta::Air
        } else {
            ModeMeta::Plain
        }
    }
}

/// Models and efforts a provider offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionCatalog {
    /// `(slug, display name)` of each model.
    pub models: Vec<(String, String)>,
    /// Reasoning effort levels of a model `model_efforts` does not name.
    pub efforts: Vec<String>,
    /// The reasoning efforts each model supports, by slug: the effort option follows the
    /// model chosen (a model missing here is offered `efforts`).
    pub model_efforts: Vec<(String, Vec<String>)>,
    /// The model the provider uses when the editor picks none (from its own configuration),
    /// shown as the current model; `None` when it cannot be known without asking the provider.
    pub default_model: Option<String>,
    /// The agent's name as users know it ("Codex"), for descriptions.
    pub agent: String,
    /// Whether the provider asks the editor before it acts (modes describe what it asks).
    pub asks: bool,
    /// Whether a prompt can be steered into a running turn (offers the `while_busy` option).
    pub steer: bool,
    /// Whether the client declared boolean config options (`sessionCapabilities.configOptions
    /// .boolean`); a client that did not gets each toggle as a select of `true` (On) and
    /// `false` (Off), as ACP asks.
    pub booleans: bool,
    /// Whether each mode carries its AIR kind (`_meta.jetbrains.air.kind`): for a
    /// `JetBrains` AIR client (ADR 0049).
    pub mode_meta: ModeMeta,
    /// Why plan mode is not offered, as a sentence for the error a client that picks it gets
    /// (`None`: it is offered).
    pub refuses_plan: Option<String>,
    /// Modes the provider offers beside acplb's own (Codex's permission profiles), learned
    /// when the session opened; they stay when newer models arrive (`session/modes.rs`).
    pub provider_modes: Vec<ProviderMode>,
    /// The mode a new session starts in, when not `read-only` (an id of [`Self::modes`]); one
    /// that is not offered leaves the session in `read-only`, with a notice.
    pub initial_mode: Option<String>,
    /// What the provider recommends: its default model, each model's default effort.
    pub recommended: Recommended,
    /// Whether and where the client is shown [`Self::recommended`].
    pub recommendations: Recommendations,
}

/// Why a config option change was refused (an invalid-params error).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionError {
    /// No option has that id.
    #[error("unknown config option `{option}`; the options are {known}")]
    UnknownOption {
        /// The refused id.
        option: String,
        /// The ids there are, listed.
        known: String,
    },
    /// The value is not one of the option's values.
    #[error("`{value}` is not a value of config option `{option}`; it takes {expected}")]
    BadValue {
        /// The option id.
        option: String,
        /// The refused value, as text.
        value: String,
        /// What the option takes, listed.
        expected: String,
    },
    /// The value exists but this provider cannot offer it.
    #[error("`{value}` of config option `{option}` is not available: {why}")]
    Unavailable {
        /// The option id.
        option: String,
        /// The refused value.
        value: String,
        /// Why, as the provider says it.
        why: String,
    },
}

impl OptionCatalog {
    /// The one-sentence description of `mode` for this provider.
    pub fn mode_description(&self, mode: Mode) -> String {
        mode.description(&self.agent, self.asks)
    }

    /// The options as ACP config options, with current values from `settings` and `mode`.
    pub fn options(&self, settings: &SessionSettings, mode: Mode) -> Vec<SessionConfigOption> {
        let agent = &self.agent;
        let modes = self.mode_values();
        let mut efforts = vec![SessionConfigSelectOption::new(DEFAULT_VALUE, "Default")];
        efforts.extend(
            self.efforts_of(settings)
                .iter()
                .map(|e| SessionConfigSelectOption::new(e.clone(), capitalize(e))),
        );
        let current_model = settings
            .model
            .clone()
            .or_else(|| self.default_model.clone())
            .unwrap_or_else(|| DEFAULT_VALUE.to_owned());
        let mut options = vec![
            SessionConfigOption::select(MODE, "Mode", self.current_mode_id(settings, mode), modes)
                .category(SessionConfigOptionCategory::Mode)
                .description(format!(
                    "What {agent} may do without asking (the same as the session mode)."
                )),
            SessionConfigOption::select(MODEL, "Model", current_model, self.model_choices())
                .category(SessionConfigOptionCategory::Model)
                .description(format!("The model {agent} uses for the next turn."))
                .meta(self.recommend(self.recommended_model())),
            SessionConfigOption::select(
                REASONING_EFFORT,
                "Reasoning effort",
                current(settings.reasoning_effort.as_ref()),
                efforts,
            )
            .category(SessionConfigOptionCategory::ThoughtLevel)
            .description("How long the model thinks before answering.")
            .meta(self.recommend(self.recommended_effort(settings))),
            self.toggle(NETWORK_ACCESS, "Network access", settings.network_access)
                .description(
                    "Lets sandboxed commands use the network in Auto mode (Full Access always has it).",
                ),
        ];
        if self.steer {
            let value = match settings.while_busy {
                WhileBusy::Queue => "queue",
                WhileBusy::Steer => "steer",
            };
            options.push(
                SessionConfigOption::select(
                    WHILE_BUSY,
                    "While busy",
                    value,
                    vec![
                        SessionConfigSelectOption::new("queue", "Queue")
                            .description("A prompt sent during a turn runs as the next turn."),
                        SessionConfigSelectOption::new("steer", "Steer").description(format!(
                            "A prompt sent during a turn goes into it; {agent} reads it at its next step."
                        )),
                    ],
                )
                .description(format!("What a prompt sent while {agent} is working does.")),
            );
        }
        options
    }

    /// The modes this provider offers, in the order editors show them.
    pub fn offered(&self) -> impl Iterator<Item = Mode> + '_ {
        Mode::ALL
            .into_iter()
            .filter(|m| *m != Mode::Plan || self.refuses_plan.is_none())
    }

    /// An on/off option: a boolean for a client that declared them, else a select whose values
    /// are `true` and `false` (the words command-line clients send anyway).
    fn toggle(&self, id: &'static str, name: &'static str, on: bool) -> SessionConfigOption {
        if self.booleans {
            return SessionConfigOption::boolean(id, name, on);
        }
        let choices = vec![
            SessionConfigSelectOption::new("true", "On"),
            SessionConfigSelectOption::new("false", "Off"),
        ];
        SessionConfigOption::select(id, name, on.to_string(), choices)
    }

    /// The reasoning efforts of the model `settings` run on (the chosen one, else the default).
    pub(super) fn efforts_of(&self, settings: &SessionSettings) -> &[String] {
        let model = settings.model.as_deref().or(self.default_model.as_deref());
        model
            .and_then(|m| self.model_efforts.iter().find(|(slug, _)| slug == m))
            .map_or(self.efforts.as_slice(), |(_, efforts)| efforts.as_slice())
    }

    /// The model picker: the model in use by default first, then the catalog.
    fn model_choices(&self) -> Vec<SessionConfigSelectOption> {
        let mut choices = Vec::new();
        match &self.default_model {
            Some(slug) if !self.models.iter().any(|(s, _)| s == slug) => {
                choices.push(SessionConfigSelectOption::new(slug.clone(), slug.clone()));
            }
            Some(_) => {}
            None => choices.push(SessionConfigSelectOption::new(
                DEFAULT_VALUE,
                "Default (from Codex config)",
            )),
        }
        choices.extend(
            self.models
                .iter()
                .map(|(slug, name)| SessionConfigSelectOption::new(slug.clone(), name.clone())),
        );
        choices
    }

    /// Applies one change to a session's `settings` or `mode`.
    pub fn apply(
        &self,
        settings: &mut SessionSettings,
        mode: &mut Mode,
        id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<(), OptionError> {
        let text = value_text(value);
        let bad = |expected: String| OptionError::BadValue {
            option: id.to_owned(),
            value: text.clone(),
            expected,
        };
        match id {
            MODE => {
                let chosen = match self.choose_mode(&text) {
                    Ok(chosen) => chosen,
                    Err(ModeRefusal::Unavailable(why)) => {
                        return Err(OptionError::Unavailable {
                            option: id.to_owned(),
                            value: text,
                            why,
                        });
                    }
                    Err(ModeRefusal::Unknown(ids)) => return Err(bad(format!("one of: {ids}"))),
                };
                super::modes::enter(chosen, settings, mode);
            }
            NETWORK_ACCESS => {
                let on = match value {
                    SessionConfigOptionValue::Boolean { value } => Some(*value),
                    _ => parse_bool(&text),
                };
                settings.network_access = on.ok_or_else(|| bad("true or false".into()))?;
            }
            MODEL => {
                let known = text == DEFAULT_VALUE
                    || self.default_model.as_deref() == Some(text.as_str())
                    || self.models.iter().any(|(slug, _)| *slug == text);
                if !known {
                    // What the picker offers, each once.
                    let offered: Vec<String> =
                        self.model_choices().iter().map(|c| c.value.to_string()).collect();
                    return Err(bad(one_of(offered.iter().map(String::as_str))));
                }
                // Choosing the model in use by default keeps following the provider's configuration.
                let is_default =
                    text == DEFAULT_VALUE || self.default_model.as_deref() == Some(text.as_str());
                settings.model = (!is_default).then_some(text);
                // An effort the new model does not support goes back to its default.
                if let Some(effort) = &settings.reasoning_effort
                    && !self.efforts_of(settings).contains(effort)
                {
                    settings.reasoning_effort = None;
                }
            }
            REASONING_EFFORT => {
                let efforts = self.efforts_of(settings);
                if text != DEFAULT_VALUE && !efforts.contains(&text) {
                    let mut all: Vec<&str> = efforts.iter().map(String::as_str).collect();
                    all.push(DEFAULT_VALUE);
                    return Err(bad(one_of(all)));
                }
                settings.reasoning_effort = (text != DEFAULT_VALUE).then_some(text);
            }
            WHILE_BUSY if self.steer => {
                settings.while_busy = match text.as_str() {
                    "queue" => WhileBusy::Queue,
                    "steer" => WhileBusy::Steer,
                    _ => return Err(bad(one_of(["queue", "steer"]))),
                };
            }
            unknown => {
                let mut known = vec![MODE, MODEL, REASONING_EFFORT, NETWORK_ACCESS];
                if self.steer {
                    known.push(WHILE_BUSY);
                }
                return Err(OptionError::UnknownOption {
                    option: unknown.to_owned(),
                    known: one_of(known),
                });
            }
        }
        Ok(())
    }
}

/// A value as the user typed it, never as wire JSON.
fn value_text(value: &SessionConfigOptionValue) -> String {
    match value {
        SessionConfigOptionValue::Boolean { value } => value.to_string(),
        SessionConfigOptionValue::ValueId { value } => value.to_string(),
        _ => "(an unsupported kind of value)".to_owned(),
    }
}

/// The string forms of a boolean that command-line clients send.
fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Some(true),
        "false" | "off" | "no" | "0" => Some(false),
        _ => None,
    }
}

fn one_of<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<&str> = values.into_iter().collect();
    format!("one of: {}", all.join(", "))
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
    use serde_json::{Value, json};

    fn catalog(default_model: Option<&str>) -> OptionCatalog {
        OptionCatalog {
            models: vec![("gpt-5.5".into(), "GPT-5.5".into())],
            efforts: vec!["low".into(), "high".into()],
            model_efforts: Vec::new(),
            default_model: default_model.map(str::to_owned),
            agent: "Codex".into(),
            asks: true,
            steer: true,
            booleans: true,
            mode_meta: ModeMeta::Plain,
            refuses_plan: None,
            provider_modes: Vec::new(),
            initial_mode: None,
            recommended: Recommended::default(),
            recommendations: Recommendations::Hidden,
        }
    }

    fn id(v: &str) -> SessionConfigOptionValue {
        SessionConfigOptionValue::ValueId {
            value: v.to_owned().into(),
        }
    }

    fn apply(
        c: &OptionCatalog,
        s: &mut SessionSettings,
        m: &mut Mode,
        option: &str,
        v: &SessionConfigOptionValue,
    ) -> Result<(), OptionError> {
        c.apply(s, m, option, v)
    }

    #[test]
    fn an_air_client_that_asked_is_shown_the_recommended_model_and_its_effort() {
        let mut c = catalog(Some("gpt-5.5"));
        c.models.push(("mini".into(), "Mini".into()));
        c.model_efforts = vec![("mini".into(), vec!["low".into(), "medium".into()])];
        c.recommended = Recommended {
            model: Some("mini".into()),
            efforts: vec![
                ("mini".into(), "medium".into()),
                ("gpt-5.5".into(), "ultra".into()),
            ],
        };
        let shown = |c: &OptionCatalog, s: &SessionSettings| -> (Value, Value) {
            let json = serde_json::to_value(c.options(s, Mode::Auto)).unwrap();
            let at = |i: usize| json[i]["_meta"]["jetbrains"]["air"]["recommendedValue"].clone();
            (at(1), at(2))
        };
        let mut s = SessionSettings::default();
        assert_eq!(shown(&c, &s), (Value::Null, Value::Null), "not asked for");
        c.recommendations = Recommendations::Air;
        // gpt-5.5 recommends an effort it is not offered: none is shown.
        assert_eq!(shown(&c, &s), (json!("mini"), Value::Null));
        s.model = Some("mini".into());
        assert_eq!(shown(&c, &s), (json!("mini"), json!("medium")));
        c.recommended.model = Some("gone".into());
        assert_eq!(
            shown(&c, &s).0,
            Value::Null,
            "a model the picker lacks is not recommended"
        );
    }

    #[test]
    fn the_effort_option_follows_the_chosen_model() {
        let mut c = catalog(Some("gpt-5.5"));
        c.models.push(("mini".into(), "Mini".into()));
        c.model_efforts = vec![
            (
                "gpt-5.5".into(),
                vec!["low".into(), "high".into(), "xhigh".into()],
            ),
            ("mini".into(), vec!["low".into()]),
        ];
        let (mut s, mut m) = (SessionSettings::default(), Mode::Auto);
        let efforts = |c: &OptionCatalog, s: &SessionSettings| -> Vec<String> {
            let json = serde_json::to_value(c.options(s, Mode::Auto)).unwrap();
            json[2]["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["value"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(efforts(&c, &s), ["default", "low", "high", "xhigh"]);
        apply(&c, &mut s, &mut m, REASONING_EFFORT, &id("xhigh")).unwrap();
        apply(&c, &mut s, &mut m, MODEL, &id("mini")).unwrap();
        assert_eq!(efforts(&c, &s), ["default", "low"]);
        assert_eq!(s.reasoning_effort, None, "xhigh is not an effort of mini");
        let e = apply(&c, &mut s, &mut m, REASONING_EFFORT, &id("high")).unwrap_err();
        assert!(e.to_string().contains("one of: low, default"), "{e}");
        apply(&c, &mut s, &mut m, REASONING_EFFORT, &id("low")).unwrap();
        apply(&c, &mut s, &mut m, MODEL, &id("gpt-5.5")).unwrap();
        assert_eq!(
            s.reasoning_effort.as_deref(),
            Some("low"),
            "low is kept: gpt-5.5 has it"
        );
    }

    #[test]
    fn options_show_current_values_and_the_model_in_use() {
        let s = SessionSettings {
            model: None,
            reasoning_effort: None,
            network_access: true,
            while_busy: WhileBusy::Queue,
            provider_mode: None,
        };
        let json = serde_json::to_value(catalog(Some("gpt-6.1-sol")).options(&s, Mode::Auto)).unwrap();
        assert_eq!(json[0]["id"], "mode");
        assert_eq!(json[0]["currentValue"], "auto");
        assert_eq!(json[0]["category"], "mode");
        assert_eq!(
            json[1]["currentValue"], "gpt-6.1-sol",
            "the model Codex will use, not `default`"
        );
        assert_eq!(json[1]["options"][0]["value"], "gpt-6.1-sol");
        assert_eq!(json[2]["currentValue"], "default");
        assert_eq!(json[3]["currentValue"], true);
        assert_eq!(json[4]["id"], "while_busy");
        assert_eq!(json[4]["currentValue"], "queue");
        let unknown = serde_json::to_value(catalog(None).options(&s, Mode::ReadOnly)).unwrap();
        assert_eq!(unknown[1]["currentValue"], "default");
        assert!(
            unknown[0]["options"][0]["description"]
                .as_str()
                .unwrap()
                .contains("asks before")
        );
    }

    #[test]
    fn while_busy_exists_only_where_the_provider_steers() {
        let mut c = catalog(None);
        let (mut s, mut m) = (SessionSettings::default(), Mode::Auto);
        apply(&c, &mut s, &mut m, WHILE_BUSY, &id("steer")).unwrap();
        assert_eq!(s.while_busy, WhileBusy::Steer);
        let e = apply(&c, &mut s, &mut m, WHILE_BUSY, &id("later"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("one of: queue, steer"), "{e}");
        c.steer = false;
        assert_eq!(c.options(&s, m).len(), 4);
        let e = apply(&c, &mut s, &mut m, WHILE_BUSY, &id("queue"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown config option `while_busy`"), "{e}");
    }

    #[test]
    fn mode_model_and_effort_are_validated_with_readable_errors() {
        let c = catalog(Some("gpt-6.1-sol"));
        let (mut s, mut m) = (SessionSettings::default(), Mode::ReadOnly);
        apply(&c, &mut s, &mut m, MODE, &id("full-access")).unwrap();
        assert_eq!(m, Mode::FullAccess);
        apply(&c, &mut s, &mut m, MODEL, &id("gpt-5.5")).unwrap();
        assert_eq!(s.model.as_deref(), Some("gpt-5.5"));
        apply(&c, &mut s, &mut m, MODEL, &id("gpt-6.1-sol")).unwrap();
        assert_eq!(s.model, None, "the default model follows Codex's configuration");
        let e = apply(&c, &mut s, &mut m, MODE, &id("yolo"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "`yolo` is not a value of config option `mode`; it takes one of: read-only, auto, full-access, plan"
        );
        apply(&c, &mut s, &mut m, MODE, &id("plan")).unwrap();
        assert_eq!(m, Mode::Plan);
        let no_plan = OptionCatalog {
            refuses_plan: Some("it needs the other transport".into()),
            ..c.clone()
        };
        let e = apply(&no_plan, &mut s, &mut m, MODE, &id("plan"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "`plan` of config option `mode` is not available: it needs the other transport"
        );
        assert_eq!(m, Mode::Plan, "a refused change changes nothing");
        assert_eq!(
            no_plan.mode("plan"),
            Err("mode `plan` is not available: it needs the other transport".to_owned())
        );
        assert_eq!(
            no_plan.mode("yolo"),
            Err("unknown mode `yolo`; the modes are read-only, auto, full-access".to_owned())
        );
        let offered: Vec<_> = no_plan
            .modes(&SessionSettings::default(), Mode::Auto)
            .available_modes
            .into_iter()
            .map(|m| m.id.to_string())
            .collect();
        assert_eq!(offered, ["read-only", "auto", "full-access"]);
        let e = apply(&c, &mut s, &mut m, REASONING_EFFORT, &id("max"))
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("one of: low, high, default"), "{e}");
        let e = apply(&c, &mut s, &mut m, "colour", &id("x"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown config option `colour`; the options are one of: mode"),
            "{e}"
        );
    }

    /// An unknown model is told the models the picker offers, each once: the model in use
    /// by default is listed once whether or not the catalog has it, and `default` only when
    /// the picker shows it (no model configured).
    #[test]
    fn an_unknown_model_is_told_what_the_picker_offers() {
        let (mut s, mut m) = (SessionSettings::default(), Mode::ReadOnly);
        let told = |c: &OptionCatalog, s: &mut SessionSettings, m: &mut Mode| {
            apply(c, s, m, MODEL, &id("gpt-0")).unwrap_err().to_string()
        };
        let in_catalog = told(&catalog(Some("gpt-5.5")), &mut s, &mut m);
        assert!(in_catalog.ends_with("it takes one of: gpt-5.5"), "{in_catalog}");
        let own = told(&catalog(Some("my-model")), &mut s, &mut m);
        assert!(own.ends_with("it takes one of: my-model, gpt-5.5"), "{own}");
        let none = told(&catalog(None), &mut s, &mut m);
        assert!(none.ends_with("it takes one of: default, gpt-5.5"), "{none}");
        // `default` is still taken where it is not shown: it means the model Codex is set to.
        apply(&catalog(Some("gpt-5.5")), &mut s, &mut m, MODEL, &id("default")).unwrap();
        assert_eq!(s.model, None);
    }

    #[test]
    fn provider_modes_are_offered_chosen_shown_and_left_for_own_modes() {
        use crate::session::modes::{PROVIDER_MODE_BASE, ProviderMode};
        let c = OptionCatalog {
            provider_modes: vec![ProviderMode {
                id: "permission-profile:locked".into(),
                name: "Profile: locked".into(),
                description: "No writes.".into(),
            }],
            ..catalog(None)
        };
        let (mut s, mut m) = (SessionSettings::default(), Mode::Auto);
        apply(&c, &mut s, &mut m, MODE, &id("permission-profile:locked")).unwrap();
        assert_eq!(
            (m, s.provider_mode.as_deref()),
            (PROVIDER_MODE_BASE, Some("permission-profile:locked"))
        );
        let modes = c.modes(&s, m);
        assert_eq!(modes.current_mode_id.to_string(), "permission-profile:locked");
        assert_eq!(modes.available_modes.len(), 5);
        let json = serde_json::to_value(c.options(&s, m)).unwrap();
        assert_eq!(json[0]["currentValue"], "permission-profile:locked");
        assert_eq!(json[0]["options"][4]["value"], "permission-profile:locked");
        apply(&c, &mut s, &mut m, MODE, &id("auto")).unwrap();
        assert_eq!((m, s.provider_mode.as_deref()), (Mode::Auto, None));
        let e = c.mode("permission-profile:gone").unwrap_err();
        assert_eq!(
            e,
            "unknown mode `permission-profile:gone`; the modes are read-only, auto, full-access, plan, permission-profile:locked"
        );
        assert!(apply(&c, &mut s, &mut m, MODE, &id("permission-profile:gone")).is_err());
        assert_eq!(c.current_mode_id(&s, m), "auto", "a refused mode changes nothing");
    }

    #[test]
    fn booleans_take_the_string_forms_clients_send() {
        let c = catalog(None);
        let (mut s, mut m) = (SessionSettings::default(), Mode::Auto);
        for (text, want) in [
            ("true", true),
            ("false", false),
            ("ON", true),
            ("no", false),
            ("1", true),
        ] {
            apply(&c, &mut s, &mut m, NETWORK_ACCESS, &id(text)).unwrap();
            assert_eq!(s.network_access, want, "{text}");
        }
        apply(
            &c,
            &mut s,
            &mut m,
            NETWORK_ACCESS,
            &SessionConfigOptionValue::boolean(true),
        )
        .unwrap();
        assert!(s.network_access);
        let e = apply(&c, &mut s, &mut m, NETWORK_ACCESS, &id("maybe"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "`maybe` is not a value of config option `network_access`; it takes true or false"
        );
        assert!(!e.contains('{'), "no wire JSON in the message");
    }
}
