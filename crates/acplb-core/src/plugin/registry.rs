//! What plugins exist: each built-in plugin registers a factory that declares its parameters
//! (for validation and docs) and builds a plugin instance per session.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Plugin;

/// The type of a plugin parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A string.
    String,
    /// A boolean.
    Bool,
    /// An integer.
    Integer,
    /// A list of strings.
    StringList,
    /// One of these strings (e.g. a backend name); checked when the file is loaded, so a typo
    /// fails with its line instead of when a session starts.
    OneOf(&'static [&'static str]),
    /// An integer of at least 1 (a count or a limit).
    PositiveInteger,
    /// A file acplb writes (an audit log): resolved against the session's workspace and checked
    /// for every session (see [`super::paths`]), so a value that could never work, or that
    /// leaves a workspace file's workspace, fails with its line.
    FilePath,
    /// A directory acplb writes under (ATM's home); checked like [`ParamKind::FilePath`].
    DirPath,
}

impl ParamKind {
    /// The TOML type name, for error messages.
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::String | ParamKind::OneOf(_) => "a string",
            ParamKind::Bool => "a boolean",
            ParamKind::Integer => "an integer",
            ParamKind::PositiveInteger => "a positive integer",
            ParamKind::StringList => "an array of strings",
            ParamKind::FilePath => "a file path",
            ParamKind::DirPath => "a directory path",
        }
    }

    /// Whether values of this kind name a place on disk.
    pub fn is_path(self) -> bool {
        matches!(self, ParamKind::FilePath | ParamKind::DirPath)
    }

    pub(crate) fn accepts(self, v: &toml::Value) -> bool {
        match (self, v) {
            (ParamKind::String, toml::Value::String(_))
            | (ParamKind::Bool, toml::Value::Boolean(_))
            | (ParamKind::Integer, toml::Value::Integer(_)) => true,
            (ParamKind::StringList, toml::Value::Array(a)) => a.iter().all(toml::Value::is_str),
            (ParamKind::OneOf(allowed), toml::Value::String(s)) => allowed.contains(&s.as_str()),
            (ParamKind::PositiveInteger, toml::Value::Integer(i)) => *i > 0,
            (ParamKind::FilePath | ParamKind::DirPath, toml::Value::String(s)) => !s.trim().is_empty(),
            _ => false,
        }
    }
}

/// One declared parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The key in `composer.toml`.
    pub name: &'static str,
    /// Its type.
    pub kind: ParamKind,
    /// One line of documentation.
    pub doc: &'static str,
}

/// A parameter value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValue {
    /// The value.
    pub value: toml::Value,
    /// `file:line` it was read from.
    pub origin: String,
    /// The line it was read from (1-based).
    pub line: usize,
}

/// The parameters given to one plugin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PluginParams {
    /// Values by key.
    pub values: BTreeMap<String, ParamValue>,
}

impl PluginParams {
    /// A string parameter.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.values.get(key).and_then(|v| v.value.as_str())
    }

    /// A boolean parameter.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.values.get(key).and_then(|v| v.value.as_bool())
    }

    /// An integer parameter.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.values.get(key).and_then(|v| v.value.as_integer())
    }

    /// Where `key` came from, if given.
    pub fn origin(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|v| v.origin.as_str())
    }
}

/// A value a plugin settled on, and why: shown by `acplb config check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The setting.
    pub key: String,
    /// Its value.
    pub value: String,
    /// Where it came from (`composer.toml:3`, `env ATM_IDENTITY`, `default`, ...).
    pub origin: String,
}

/// What a plugin gets when it is built for a session.
#[derive(Debug, Clone)]
pub struct BuildContext {
    /// The session's workspace.
    pub cwd: PathBuf,
    /// The session id (empty for `config check`).
    pub session_id: String,
    /// What the plugins before this one resolved, in order (filled in by
    /// [`ComposerPipelines::build`](super::ComposerPipelines::build)): a plugin that builds on an
    /// earlier one (mail on the identity, say) reads it here and can refuse a wrong order.
    pub earlier: Vec<(String, Vec<Resolved>)>,
}

impl BuildContext {
    /// The context of a session in `cwd`, before any plugin is built.
    pub fn new(cwd: impl Into<PathBuf>, session_id: impl Into<String>) -> Self {
        Self {
            cwd: cwd.into(),
            session_id: session_id.into(),
            earlier: Vec::new(),
        }
    }

    /// The value `key` that the earlier plugin `plugin` resolved, if it was built.
    pub fn earlier_value(&self, plugin: &str, key: &str) -> Option<&Resolved> {
        self.earlier
            .iter()
            .filter(|(id, _)| id == plugin)
            .flat_map(|(_, values)| values)
            .find(|r| r.key == key)
    }

    /// Whether the plugin `plugin` was built before this one.
    pub fn built_earlier(&self, plugin: &str) -> bool {
        self.earlier.iter().any(|(id, _)| id == plugin)
    }
}

/// A plugin instance plus the values it resolved.
pub struct Built {
    /// The plugin.
    pub plugin: Box<dyn Plugin>,
    /// Its resolved settings.
    pub resolved: Vec<Resolved>,
}

impl std::fmt::Debug for Built {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Built")
            .field("resolved", &self.resolved)
            .finish_non_exhaustive()
    }
}

/// Builds one kind of plugin, on the blocking pool (the registry is shared with it).
pub trait PluginFactory: Send + Sync {
    /// The id used in `composer.toml`.
    fn id(&self) -> &'static str;
    /// One line saying what the plugin does.
    fn description(&self) -> &'static str;
    /// Its parameters.
    fn params(&self) -> &'static [ParamSpec];
    /// Checks one value beyond its type (a name's characters, say) when the file is loaded, so
    /// a bad value fails with its line whether or not the plugin is required. `Err` says what is
    /// wrong, as a sentence that follows "`key` of plugin `id` ...".
    fn check_value(&self, _name: &str, _value: &toml::Value) -> Result<(), String> {
        Ok(())
    }
    /// Builds an instance for one session. Building only resolves values (it may read files,
    /// such as `.atm.toml`, but writes or claims nothing), so an error here is a configuration
    /// error, refused whether or not the plugin is required. Runs on the blocking pool.
    fn build(&self, params: &PluginParams, ctx: &BuildContext) -> Result<Built, String>;
}

/// All known plugin factories.
#[derive(Default)]
pub struct Registry {
    factories: Vec<Box<dyn PluginFactory>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.factories.iter().map(|x| x.id()))
            .finish()
    }
}

impl Registry {
    /// Adds a factory.
    #[must_use]
    pub fn with(mut self, factory: impl PluginFactory + 'static) -> Self {
        self.factories.push(Box::new(factory));
        self
    }

    /// The factory for `id` (a handful of built-ins: a scan is as fast as a map).
    pub fn get(&self, id: &str) -> Option<&dyn PluginFactory> {
        self.factories.iter().find(|f| f.id() == id).map(AsRef::as_ref)
    }

    /// Every known id.
    pub fn ids(&self) -> Vec<&'static str> {
        self.factories.iter().map(|f| f.id()).collect()
    }
}

/// The known name closest to `wrong`, for "did you mean" hints: an edit distance of at most a
/// third of the name, at least 2 (shared by every configuration file acplb reads).
pub fn closest<'a>(wrong: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|k| (edit_distance(wrong, k), k))
        .filter(|(d, k)| *d <= (k.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_suggests_near_misses_only() {
        let known = ["atm-identity", "atm-mail", "audit"];
        assert_eq!(closest("atm-identiy", known), Some("atm-identity"));
        assert_eq!(closest("atm_mail", known), Some("atm-mail"));
        assert_eq!(closest("telemetry", known), None);
    }

    #[test]
    fn kinds_check_types() {
        assert!(ParamKind::StringList.accepts(&toml::Value::Array(vec!["a".into()])));
        assert!(!ParamKind::StringList.accepts(&toml::Value::Array(vec![1.into()])));
        assert!(!ParamKind::Bool.accepts(&"true".into()));
        let backend = ParamKind::OneOf(&["files", "atm-cli"]);
        assert!(backend.accepts(&"atm-cli".into()));
        assert!(!backend.accepts(&"sqlite".into()));
        assert_eq!(backend.name(), "a string");
        assert!(ParamKind::PositiveInteger.accepts(&1.into()));
        assert!(!ParamKind::PositiveInteger.accepts(&0.into()));
        assert!(!ParamKind::FilePath.accepts(&" ".into()));
        assert!(ParamKind::FilePath.accepts(&"a.jsonl".into()));
    }
}
