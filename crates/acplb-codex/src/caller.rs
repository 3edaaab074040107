//! What the client that opened a session asked of Codex itself, in the `acplb/codex` key of its
//! `session/new` `_meta` (`acplb mcp codex` puts a `codex` tool call's instructions and config
//! there): developer instructions that take the place of the user's own (plugins' context is
//! still appended after them), base instructions that replace the model's, and config
//! overrides. The app-server gets them in `thread/start`; `codex exec` as `-c key=value`
//! overrides, so a key that could carry a secret is refused. A `JetBrains` AIR client's custom
//! instructions (`_meta.jetbrains.air.customInstructions`, a string, as the TS peer reads them)
//! are developer instructions of the same kind, when `acplb/codex` gives none.

use acplb_core::error::ProviderError;
use acplb_core::provider::SessionSetup;
use acplb_core::toml_text;
use serde_json::{Map, Value};

/// The `_meta` key the Codex provider reads.
pub(crate) const META_KEY: &str = "acplb/codex";

/// Parts of a key that name credentials: such a key is refused, never put on a command line.
const SECRET_PARTS: [&str; 8] = [
    "token", "secret", "password", "api_key", "apikey", "env_key", "header", "bearer",
];

/// The client's own instructions and config overrides for the session's thread.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Caller {
    pub(crate) developer_instructions: Option<String>,
    pub(crate) base_instructions: Option<String>,
    /// A Codex profile (`--profile NAME`: `$CODEX_HOME/NAME.config.toml`).
    pub(crate) profile: Option<String>,
    /// Dotted keys (`tools.update_plan.enabled`) to JSON values.
    pub(crate) config: Map<String, Value>,
}

impl Caller {
    /// What `setup`'s `_meta` asks for (nothing when it has no `acplb/codex` key).
    pub(crate) fn of(setup: &SessionSetup) -> Result<Self, ProviderError> {
        Self::of_meta(&setup.meta).map_err(ProviderError::Prepare)
    }

    /// [`Self::of`] for a session's `_meta`: `acplb/codex`, then AIR's custom instructions when
    /// it gives no developer instructions.
    fn of_meta(meta: &Map<String, Value>) -> Result<Self, String> {
        let mut caller = Self::from_meta(meta).map_err(|e| format!("`_meta.{META_KEY}`: {e}"))?;
        if caller.developer_instructions.is_none() {
            caller.developer_instructions = air_instructions(meta)?;
        }
        Ok(caller)
    }

    /// The `acplb/codex` entry and the AIR custom instructions of `meta` when they are valid,
    /// to keep with the session; else nothing.
    pub(crate) fn kept(meta: &Map<String, Value>) -> Map<String, Value> {
        let mut kept = Map::new();
        if let (Some(ours), Ok(_)) = (meta.get(META_KEY), Self::from_meta(meta)) {
            kept.insert(META_KEY.to_owned(), ours.clone());
        }
        if let Ok(Some(text)) = air_instructions(meta) {
            kept.insert(
                acplb_core::capabilities::JETBRAINS.to_owned(),
                serde_json::json!({ acplb_core::capabilities::AIR: { AIR_INSTRUCTIONS: text } }),
            );
        }
        kept
    }

    fn from_meta(meta: &Map<String, Value>) -> Result<Self, String> {
        let Some(value) = meta.get(META_KEY) else {
            return Ok(Self::default());
        };
        let Value::Object(ours) = value else {
            return Err(format!("must be an object, not {value}"));
        };
        let mut caller = Self::default();
        for (key, value) in ours {
            match (key.as_str(), value) {
                ("developerInstructions", Value::String(s)) => {
                    caller.developer_instructions = Some(s.clone());
                }
                ("baseInstructions", Value::String(s)) => caller.base_instructions = Some(s.clone()),
                ("profile", Value::String(s)) => {
                    check_key(s)
                        .map_err(|_| format!("profile `{s}` must be letters, digits, `_` and `-`"))?;
                    if s.contains('.') {
                        return Err(format!("profile `{s}` must be letters, digits, `_` and `-`"));
                    }
                    caller.profile = Some(s.clone());
                }
                ("config", Value::Object(config)) => {
                    for (k, v) in config {
                        check_key(k)?;
                        if v.is_null() {
                            return Err(format!("`config.{k}` is null; leave it out instead"));
                        }
                        caller.config.insert(k.clone(), v.clone());
                    }
                }
                ("developerInstructions" | "baseInstructions" | "profile", _) => {
                    return Err(format!("`{key}` must be a string"));
                }
                ("config", _) => return Err("`config` must be an object".into()),
                _ => return Err(format!("unknown key `{key}`")),
            }
        }
        Ok(caller)
    }

    /// For a transport that cannot take `--profile` per thread (the app-server): the keys of
    /// the profile's file (`<codex home>/<profile>.config.toml`) become config overrides,
    /// under the client's own. Reads the file on the blocking pool.
    pub(crate) async fn with_profile_file(mut self) -> Result<Self, ProviderError> {
        let Some(name) = self.profile.clone() else {
            return Ok(self);
        };
        let home = crate::instructions::codex_home(|k| std::env::var(k).ok()).ok_or_else(|| {
            ProviderError::Prepare(format!("profile `{name}`: no Codex home (CODEX_HOME or HOME)"))
        })?;
        let path = home.join(format!("{name}.config.toml"));
        let text = tokio::task::spawn_blocking({
            let path = path.clone();
            move || std::fs::read_to_string(path)
        })
        .await
        .map_err(|e| ProviderError::Prepare(format!("reading profile `{name}` stopped: {e}")))?
        .map_err(|e| {
            ProviderError::Prepare(format!("profile `{name}`: cannot read {}: {e}", path.display()))
        })?;
        let table: toml::Table = text
            .parse()
            .map_err(|e| ProviderError::Prepare(format!("profile `{name}`: {}: {e}", path.display())))?;
        let mut config = serde_json::to_value(table)
            .ok()
            .and_then(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .unwrap_or_default();
        config.extend(std::mem::take(&mut self.config));
        self.config = config;
        Ok(self)
    }

    /// Puts this back into `meta` (the profile, once read into `config`, left out).
    pub(crate) fn store(&self, meta: &mut Map<String, Value>) {
        let mut ours = Map::new();
        if let Some(t) = &self.developer_instructions {
            ours.insert("developerInstructions".into(), Value::String(t.clone()));
        }
        if let Some(t) = &self.base_instructions {
            ours.insert("baseInstructions".into(), Value::String(t.clone()));
        }
        ours.insert("config".into(), Value::Object(self.config.clone()));
        meta.insert(META_KEY.into(), Value::Object(ours));
    }

    /// The config overrides as `-c key=value` entries (TOML values, keys as given).
    pub(crate) fn overrides(&self) -> Vec<String> {
        self.config
            .iter()
            .map(|(k, v)| format!("{k}={}", toml_value(v)))
            .collect()
    }
}

/// The client's base instructions in a file of their own (0600) for `codex exec`'s
/// `model_instructions_file`, written and removed on the blocking pool.
#[derive(Debug, Default)]
pub(crate) struct BaseInstructions(Option<tempfile::NamedTempFile>);

impl BaseInstructions {
    pub(crate) async fn write(text: Option<String>) -> Result<Self, ProviderError> {
        let Some(text) = text else {
            return Ok(Self(None));
        };
        let file = tokio::task::spawn_blocking(move || {
            let mut file = tempfile::Builder::new()
                .prefix("acplb-base-")
                .suffix(".md")
                .tempfile()?;
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            Ok::<_, std::io::Error>(file)
        })
        .await
        .map_err(|e| ProviderError::Prepare(format!("writing the base instructions stopped: {e}")))?
        .map_err(|e| ProviderError::Prepare(format!("cannot write the base instructions: {e}")))?;
        Ok(Self(Some(file)))
    }

    pub(crate) fn path(&self) -> Option<&std::path::Path> {
        self.0.as_ref().map(tempfile::NamedTempFile::path)
    }
}

impl Drop for BaseInstructions {
    /// Removes the file on the blocking pool when a runtime is there to take it.
    fn drop(&mut self) {
        let Some(file) = self.0.take() else { return };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(move || drop(file));
            }
            Err(_) => drop(file),
        }
    }
}

/// The AIR key of a session request's custom instructions.
pub(crate) const AIR_INSTRUCTIONS: &str = "customInstructions";

/// `_meta.jetbrains.air.customInstructions`: a string (an empty one, or `null`, is none).
fn air_instructions(meta: &Map<String, Value>) -> Result<Option<String>, String> {
    let value = meta
        .get(acplb_core::capabilities::JETBRAINS)
        .and_then(|j| j.get(acplb_core::capabilities::AIR))
        .and_then(|a| a.get(AIR_INSTRUCTIONS));
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            };
            Err(format!(
                "`_meta.jetbrains.air.{AIR_INSTRUCTIONS}` must be a string of instructions, not {kind}"
            ))
        }
    }
}

/// A dotted key of bare parts that names no credential.
fn check_key(key: &str) -> Result<(), String> {
    let bare = |p: &str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    if !key.split('.').all(bare) {
        return Err(format!(
            "config key `{key}` must be dotted parts of letters, digits, `_` and `-`"
        ));
    }
    let lower = key.to_ascii_lowercase();
    if lower.split('.').any(|p| p == "env") || SECRET_PARTS.iter().any(|s| lower.contains(s)) {
        return Err(format!(
            "config key `{key}` may hold a secret; set it in Codex's own config.toml instead"
        ));
    }
    Ok(())
}

/// A JSON value in TOML (strings through the workspace's one escaper).
fn toml_value(value: &Value) -> String {
    match value {
        Value::String(s) => toml_text::basic(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{} = {}", toml_text::key(k), toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // Refused at parse for the top level; TOML has no null inside either.
        Value::Null => "\"\"".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(META_KEY.into(), v);
        m
    }

    #[test]
    fn instructions_and_config_are_read_and_spelled_as_toml() {
        let c = Caller::from_meta(&meta(json!({
            "developerInstructions": "be brief",
            "baseInstructions": "you are a test",
            "config": {"compact_prompt": "say \"x\"\nnow", "tools.update_plan.enabled": false,
                       "n": 3, "list": ["a", 1], "t": {"a b": true}}
        })))
        .unwrap();
        assert_eq!(c.developer_instructions.as_deref(), Some("be brief"));
        assert_eq!(c.base_instructions.as_deref(), Some("you are a test"));
        let o = c.overrides();
        assert!(
            o.contains(&r#"compact_prompt="say \"x\"\nnow""#.to_owned()),
            "{o:?}"
        );
        assert!(o.contains(&"tools.update_plan.enabled=false".to_owned()));
        assert!(o.contains(&r#"list=["a", 1]"#.to_owned()));
        assert!(o.contains(&r#"t={"a b" = true}"#.to_owned()));
        assert_eq!(Caller::from_meta(&Map::new()).unwrap(), Caller::default());
    }

    #[test]
    fn bad_or_secret_keys_are_refused() {
        let err = |v| Caller::from_meta(&meta(v)).unwrap_err();
        assert!(err(json!({"config": {"a b": 1}})).contains("dotted parts"));
        assert!(err(json!({"config": {"a=1\nb": 1}})).contains("dotted parts"));
        assert!(err(json!({"config": {"mcp_servers.x.env.K": "v"}})).contains("secret"));
        assert!(err(json!({"config": {"model_providers.p.http_headers": {}}})).contains("secret"));
        assert!(err(json!({"config": {"x": null}})).contains("null"));
        assert!(err(json!({"developerInstructions": 1})).contains("must be a string"));
        assert!(err(json!({"bogus": 1})).contains("unknown key"));
        assert!(err(json!({"profile": "../x"})).contains("profile `../x`"));
        assert!(err(json!({"profile": "a.b"})).contains("profile `a.b`"));
        assert!(err(json!("x")).contains("must be an object"));
    }

    #[test]
    fn only_an_accepted_entry_of_ours_is_kept() {
        let ours = json!({"profile": "loud", "config": {"model_verbosity": "high"}});
        let mut all = meta(ours.clone());
        all.insert("someone/else".into(), json!({"x": 1}));
        assert_eq!(Caller::kept(&all), meta(ours));
        let secret = meta(json!({"config": {"model_providers.p.http_headers": {"A": "b"}}}));
        assert!(
            Caller::kept(&secret).is_empty(),
            "a refused entry is never written down"
        );
        assert!(Caller::kept(&Map::new()).is_empty());
    }

    fn air(value: &Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            "jetbrains".into(),
            json!({ "air": { "customInstructions": value } }),
        );
        m
    }

    #[test]
    fn air_custom_instructions_are_developer_instructions_unless_ours_give_some() {
        let of = |m: &Map<String, Value>| Caller::of_meta(m).map(|c| c.developer_instructions);
        assert_eq!(
            of(&air(&json!("answer in French"))).unwrap().as_deref(),
            Some("answer in French")
        );
        let mut both = air(&json!("answer in French"));
        both.extend(meta(json!({"developerInstructions": "be brief"})));
        assert_eq!(
            of(&both).unwrap().as_deref(),
            Some("be brief"),
            "acplb/codex's own win"
        );
        assert_eq!(of(&air(&Value::Null)).unwrap(), None);
        assert_eq!(of(&air(&json!("  "))).unwrap(), None, "blank is none");
        let e = of(&air(&json!(3))).unwrap_err();
        assert!(
            e.contains("customInstructions` must be a string of instructions, not a number"),
            "{e}"
        );
        let e = of(&air(&json!({"text": "x"}))).unwrap_err();
        assert!(e.contains("not an object"), "{e}");
    }

    #[test]
    fn air_custom_instructions_are_kept_with_the_session_and_a_bad_value_is_not() {
        let mut m = air(&json!("answer in French"));
        m.get_mut("jetbrains").unwrap()["air"]["other"] = json!(1);
        let kept = Caller::kept(&m);
        assert_eq!(
            Value::Object(kept.clone()),
            json!({"jetbrains": {"air": {"customInstructions": "answer in French"}}})
        );
        assert_eq!(
            Caller::of_meta(&kept).unwrap().developer_instructions.as_deref(),
            Some("answer in French")
        );
        assert!(Caller::kept(&air(&json!(3))).is_empty());
    }
}
