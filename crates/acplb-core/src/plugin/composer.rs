//! `composer.toml`: finding it, parsing it with line numbers, and validating every plugin id,
//! key and type against the registry before anything starts.
//!
//! ```toml
//! [[plugin]]
//! id = "atm-identity"
//! required = true
//! identity = "arch-ctm"
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::registry::{ParamKind, ParamSpec, ParamValue, PluginParams, Registry, closest};

/// Where the composer file was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--composer PATH`.
    Flag(PathBuf),
    /// `$ACPLB_COMPOSER`.
    Env(PathBuf),
    /// `composer.toml` in the session's workspace.
    Workspace(PathBuf),
    /// The user config dir.
    UserConfig(PathBuf),
}

impl Source {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            Source::Flag(p) | Source::Env(p) | Source::Workspace(p) | Source::UserConfig(p) => p,
        }
    }

    /// How it was found, for `config check`.
    pub fn how(&self) -> &'static str {
        match self {
            Source::Flag(_) => "--composer",
            Source::Env(_) => "ACPLB_COMPOSER",
            Source::Workspace(_) => "the workspace",
            Source::UserConfig(_) => "the user config dir",
        }
    }
}

/// `composer.toml` in `workspace`, if there is one. Repository content: honoured only in a
/// trusted workspace (see [`super::trust`]).
pub fn workspace_file(workspace: &Path) -> Option<PathBuf> {
    Some(workspace.join("composer.toml")).filter(|p| p.is_file())
}

/// `<config dir>/acplb/composer.toml`, if there is one.
pub fn user_file(config_dir: &Path) -> Option<PathBuf> {
    Some(config_dir.join("acplb").join("composer.toml")).filter(|p| p.is_file())
}

/// The user config dir: `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn user_config_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("XDG_CONFIG_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))
}

/// acplb's state directory (`$ACPLB_STATE_DIR`, else `$XDG_STATE_HOME/acplb`, else
/// `~/.local/state/acplb`; see [`crate::sessions::state`]). A workspace's composer file may
/// name paths here as well as in the workspace.
pub fn state_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    crate::sessions::state::state_dir(env)
}

/// One validated `[[plugin]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginConfig {
    /// Its id.
    pub id: String,
    /// Whether its failures fail the prompt.
    pub required: bool,
    /// Its parameters.
    pub params: PluginParams,
    /// The line of its `[[plugin]]` header.
    pub line: usize,
}

/// A validated composer file.
#[derive(Debug, Clone, PartialEq)]
pub struct ComposerConfig {
    /// Where it came from.
    pub source: Source,
    /// The plugins, in order.
    pub plugins: Vec<PluginConfig>,
}

/// Why a composer file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ComposerError {
    /// The file could not be read.
    #[error("cannot read `{file}`: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The file is not valid here, at `line`.
    #[error("{file}:{line}: {message}{}", hint.as_ref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
}

/// Reads and validates `source`.
pub fn load(source: Source, registry: &Registry) -> Result<ComposerConfig, ComposerError> {
    let file = source.path().display().to_string();
    let bytes = std::fs::read(source.path()).map_err(|e| ComposerError::Read {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.split(|b| *b == b'\n').count();
        let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
        ComposerError::Invalid {
            file: file.clone(),
            line,
            message: format!("the file is not valid UTF-8 (byte 0x{byte:02x})"),
            hint: Some("save composer.toml as UTF-8 text".into()),
        }
    })?;
    let plugins = parse(text, &file, registry)?;
    Ok(ComposerConfig { source, plugins })
}

/// Parses and validates composer text; `file` names it in errors. Linear in the file's size:
/// line numbers come from one index of the line starts, plugin ids from one map.
pub fn parse(text: &str, file: &str, registry: &Registry) -> Result<Vec<PluginConfig>, ComposerError> {
    let check = Checker {
        file,
        lines: LineIndex::new(text),
        registry,
    };
    let root = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        check.invalid(
            offset,
            e.message().trim().to_owned(),
            Some(
                "each plugin is a `[[plugin]]` table of `key = value` lines; see composer.toml.example"
                    .into(),
            ),
        )
    })?;
    let mut plugins = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (key, value) in root.get_ref() {
        if key.get_ref().as_ref() != "plugin" {
            let hint = Some("the file holds only `[[plugin]]` tables".to_owned());
            return Err(check.invalid(
                key.span().start,
                format!("unknown top-level key `{}`", key.get_ref()),
                hint,
            ));
        }
        let DeValue::Array(entries) = value.get_ref() else {
            let hint = Some("write each plugin as a `[[plugin]]` table".to_owned());
            return Err(check.invalid(
                value.span().start,
                "`plugin` must be an array of tables".into(),
                hint,
            ));
        };
        for entry in entries {
            let DeValue::Table(table) = entry.get_ref() else {
                let hint = Some("write each plugin as a `[[plugin]]` table".to_owned());
                return Err(check.invalid(
                    entry.span().start,
                    "each `plugin` entry must be a table".into(),
                    hint,
                ));
            };
            let plugin = check.plugin_entry(table, entry.span().start)?;
            if let Some(first) = seen.insert(plugin.id.clone(), plugin.line) {
                return Err(check.invalid(
                    entry.span().start,
                    format!(
                        "plugin `{}` is configured twice (first at line {first})",
                        plugin.id
                    ),
                    Some(format!(
                        "each plugin runs once per session: merge the two `{}` tables into one",
                        plugin.id
                    )),
                ));
            }
            plugins.push(plugin);
        }
    }
    Ok(plugins)
}

/// Byte offsets to 1-based line numbers, by binary search over the line starts.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { starts }
    }

    fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|start| *start <= offset).max(1)
    }
}

/// Validates one file's entries against the registry, naming the file and line of each error.
struct Checker<'a> {
    file: &'a str,
    lines: LineIndex,
    registry: &'a Registry,
}

impl Checker<'_> {
    fn invalid(&self, offset: usize, message: String, hint: Option<String>) -> ComposerError {
        ComposerError::Invalid {
            file: self.file.to_owned(),
            line: self.lines.line(offset),
            message,
            hint,
        }
    }

    fn plugin_entry(&self, table: &DeTable<'_>, at: usize) -> Result<PluginConfig, ComposerError> {
        let registry = self.registry;
        let Some((_, id_value)) = table.iter().find(|(k, _)| k.get_ref().as_ref() == "id") else {
            let hint = format!("known plugins: {}", registry.ids().join(", "));
            return Err(self.invalid(at, "a `[[plugin]]` has no `id`".into(), Some(hint)));
        };
        let DeValue::String(id) = id_value.get_ref() else {
            let hint = format!("known plugins: {}", registry.ids().join(", "));
            return Err(self.invalid(id_value.span().start, "`id` must be a string".into(), Some(hint)));
        };
        let Some(factory) = registry.get(id) else {
            let hint = match closest(id, registry.ids()) {
                Some(near) => format!(
                    "did you mean `{near}`? known plugins: {}",
                    registry.ids().join(", ")
                ),
                None => format!("known plugins: {}", registry.ids().join(", ")),
            };
            return Err(self.invalid(
                id_value.span().start,
                format!("unknown plugin `{id}`"),
                Some(hint),
            ));
        };
        let mut required = false;
        let mut params = PluginParams::default();
        for (key, value) in table {
            let name = key.get_ref().as_ref();
            let value_at = value.span().start;
            match name {
                "id" => {}
                "required" => {
                    let DeValue::Boolean(b) = value.get_ref() else {
                        let hint =
                            Some("`required = true` makes the plugin's failures fail the prompt".into());
                        return Err(self.invalid(value_at, "`required` must be a boolean".into(), hint));
                    };
                    required = *b;
                }
                _ => {
                    let Some(spec) = factory.params().iter().find(|p| p.name == name) else {
                        return Err(self.invalid(
                            key.span().start,
                            format!("unknown key `{name}` for plugin `{id}`"),
                            Some(unknown_key_hint(id, name, factory.params())),
                        ));
                    };
                    let plain = to_value(value.get_ref()).map_err(|message| {
                        let message = format!("`{name}` of plugin `{id}` {message}");
                        self.invalid(value_at, message, Some(spec.doc.to_owned()))
                    })?;
                    if !spec.kind.accepts(&plain) {
                        let (message, hint) = wrong_value(id, spec, &plain);
                        return Err(self.invalid(value_at, message, Some(hint)));
                    }
                    if let Err(message) = factory.check_value(name, &plain) {
                        let message = format!("`{name}` of plugin `{id}` {message}");
                        return Err(self.invalid(value_at, message, Some(spec.doc.to_owned())));
                    }
                    let line = self.lines.line(value_at);
                    let origin = format!("{}:{line}", self.file);
                    params.values.insert(
                        name.to_owned(),
                        ParamValue {
                            value: plain,
                            origin,
                            line,
                        },
                    );
                }
            }
        }
        Ok(PluginConfig {
            id: id.to_string(),
            required,
            params,
            line: self.lines.line(at),
        })
    }
}

fn unknown_key_hint(id: &str, name: &str, params: &[ParamSpec]) -> String {
    let known: Vec<&str> = params.iter().map(|p| p.name).collect();
    match closest(name, known.iter().copied()) {
        Some(near) => format!(
            "did you mean `{near}`? `{id}` takes: id, required, {}",
            known.join(", ")
        ),
        None => format!("`{id}` takes: id, required, {}", known.join(", ")),
    }
}

/// The message and hint for a value `spec` refuses.
fn wrong_value(id: &str, spec: &ParamSpec, value: &toml::Value) -> (String, String) {
    let name = spec.name;
    match (spec.kind, value) {
        (ParamKind::OneOf(allowed), toml::Value::String(given)) => {
            let choices = allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let hint = match closest(given, allowed.iter().copied()) {
                Some(near) => format!("did you mean `{near}`? {}", spec.doc),
                None => spec.doc.to_owned(),
            };
            (
                format!("`{name}` of plugin `{id}` must be one of {choices}, not `{given}`"),
                hint,
            )
        }
        (ParamKind::PositiveInteger, toml::Value::Integer(given)) => (
            format!("`{name}` of plugin `{id}` must be at least 1, not {given}"),
            spec.doc.to_owned(),
        ),
        (ParamKind::FilePath | ParamKind::DirPath, toml::Value::String(_)) => (
            format!("`{name}` of plugin `{id}` must not be empty"),
            spec.doc.to_owned(),
        ),
        _ => (
            format!(
                "`{name}` of plugin `{id}` must be {}, not {}",
                spec.kind.name(),
                value.type_str()
            ),
            spec.doc.to_owned(),
        ),
    }
}

/// The plain value; `Err` (a sentence following "`key` of plugin `id`") for a number TOML
/// allows but no plugin can hold.
fn to_value(v: &DeValue<'_>) -> Result<toml::Value, String> {
    Ok(match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => {
            let n = i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                let (what, bound) = if i.as_str().starts_with('-') {
                    ("small", format!("the smallest integer is {}", i64::MIN))
                } else {
                    ("large", format!("the largest integer is {}", i64::MAX))
                };
                format!("is too {what}: `{i}` ({bound})")
            })?;
            toml::Value::Integer(n)
        }
        DeValue::Float(f) => {
            let x = f
                .as_str()
                .parse::<f64>()
                .map_err(|_| format!("is not a number acplb can hold: `{f}`"))?;
            toml::Value::Float(x)
        }
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::String(d.to_string()),
        DeValue::Array(a) => toml::Value::Array(
            a.iter()
                .map(|x| to_value(x.get_ref()))
                .collect::<Result<_, _>>()?,
        ),
        DeValue::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, x)| Ok((k.get_ref().to_string(), to_value(x.get_ref())?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

#[cfg(test)]
mod tests;
