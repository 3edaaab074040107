//! `composer.toml`: finding it, parsing it with line numbers, and validating every plugin id,
//! key and type against the registry before anything starts.
//!
//! ```toml
//! [[plugin]]
//! id = "atm-identity"
//! required = true
//! identity = "arch-ctm"
//! ```

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

/// Finds the composer file: the flag, else `ACPLB_COMPOSER` (both passed as `explicit`), else
/// `composer.toml` in `workspace`, else `<config dir>/acplb/composer.toml`. `None`: no plugins.
pub fn find(explicit: Option<Source>, workspace: Option<&Path>, config_dir: Option<&Path>) -> Option<Source> {
    if explicit.is_some() {
        return explicit;
    }
    if let Some(p) = workspace.map(|w| w.join("composer.toml")).filter(|p| p.is_file()) {
        return Some(Source::Workspace(p));
    }
    config_dir
        .map(|d| d.join("acplb").join("composer.toml"))
        .filter(|p| p.is_file())
        .map(Source::UserConfig)
}

/// The user config dir: `$XDG_CONFIG_HOME`, else `~/.config`.
pub fn user_config_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("XDG_CONFIG_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".config")))
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
    let text = std::fs::read_to_string(source.path()).map_err(|e| ComposerError::Read {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let plugins = parse(&text, &file, registry)?;
    Ok(ComposerConfig { source, plugins })
}

/// Parses and validates composer text; `file` names it in errors.
pub fn parse(text: &str, file: &str, registry: &Registry) -> Result<Vec<PluginConfig>, ComposerError> {
    let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
    let invalid = |offset: usize, message: String, hint: Option<String>| ComposerError::Invalid {
        file: file.to_owned(),
        line: line_of(offset),
        message,
        hint,
    };
    let root = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(offset, e.message().trim().to_owned(), None)
    })?;
    let mut plugins = Vec::new();
    for (key, value) in root.get_ref() {
        if key.get_ref().as_ref() != "plugin" {
            let hint = Some("the file holds only `[[plugin]]` tables".to_owned());
            return Err(invalid(
                key.span().start,
                format!("unknown top-level key `{}`", key.get_ref()),
                hint,
            ));
        }
        let DeValue::Array(entries) = value.get_ref() else {
            let hint = Some("write each plugin as a `[[plugin]]` table".to_owned());
            return Err(invalid(
                value.span().start,
                "`plugin` must be an array of tables".into(),
                hint,
            ));
        };
        for entry in entries {
            let DeValue::Table(table) = entry.get_ref() else {
                return Err(invalid(
                    entry.span().start,
                    "each `plugin` entry must be a table".into(),
                    None,
                ));
            };
            plugins.push(plugin_entry(
                table,
                entry.span().start,
                file,
                registry,
                &invalid,
                &line_of,
            )?);
        }
    }
    Ok(plugins)
}

fn plugin_entry(
    table: &DeTable<'_>,
    at: usize,
    file: &str,
    registry: &Registry,
    invalid: &dyn Fn(usize, String, Option<String>) -> ComposerError,
    line_of: &dyn Fn(usize) -> usize,
) -> Result<PluginConfig, ComposerError> {
    let get = |name: &str| table.iter().find(|(k, _)| k.get_ref().as_ref() == name);
    let Some((_, id_value)) = get("id") else {
        let hint = format!("known plugins: {}", registry.ids().join(", "));
        return Err(invalid(at, "a `[[plugin]]` has no `id`".into(), Some(hint)));
    };
    let DeValue::String(id) = id_value.get_ref() else {
        return Err(invalid(
            id_value.span().start,
            "`id` must be a string".into(),
            None,
        ));
    };
    let Some(factory) = registry.get(id) else {
        let hint = match closest(id, registry.ids()) {
            Some(near) => format!(
                "did you mean `{near}`? known plugins: {}",
                registry.ids().join(", ")
            ),
            None => format!("known plugins: {}", registry.ids().join(", ")),
        };
        return Err(invalid(
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
            "required" => match value.get_ref() {
                DeValue::Boolean(b) => required = *b,
                _ => return Err(invalid(value_at, "`required` must be a boolean".into(), None)),
            },
            _ => {
                let Some(spec) = factory.params().iter().find(|p| p.name == name) else {
                    let known: Vec<&str> = factory.params().iter().map(|p| p.name).collect();
                    let hint = match closest(name, known.iter().copied()) {
                        Some(near) => format!(
                            "did you mean `{near}`? `{id}` takes: id, required, {}",
                            known.join(", ")
                        ),
                        None => format!("`{id}` takes: id, required, {}", known.join(", ")),
                    };
                    return Err(invalid(
                        key.span().start,
                        format!("unknown key `{name}` for plugin `{id}`"),
                        Some(hint),
                    ));
                };
                let plain = to_value(value.get_ref());
                if !spec.kind.accepts(&plain) {
                    let (message, hint) = wrong_value(id, spec, &plain);
                    return Err(invalid(value_at, message, Some(hint)));
                }
                let origin = format!("{file}:{}", line_of(value_at));
                params
                    .values
                    .insert(name.to_owned(), ParamValue { value: plain, origin });
            }
        }
    }
    Ok(PluginConfig {
        id: id.to_string(),
        required,
        params,
        line: line_of(at),
    })
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

fn to_value(v: &DeValue<'_>) -> toml::Value {
    match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => i
            .to_string()
            .parse::<i64>()
            .map_or_else(|_| toml::Value::String(i.to_string()), toml::Value::Integer),
        DeValue::Float(f) => f
            .to_string()
            .parse::<f64>()
            .map_or_else(|_| toml::Value::String(f.to_string()), toml::Value::Float),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::String(d.to_string()),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_value(x.get_ref())).collect()),
        DeValue::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, x)| (k.get_ref().to_string(), to_value(x.get_ref())))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::registry::{BuildContext, Built, PluginFactory};

    struct Fake;
    impl PluginFactory for Fake {
        fn id(&self) -> &'static str {
            "atm-identity"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[
                ParamSpec {
                    name: "identity",
                    kind: ParamKind::String,
                    doc: "the agent name",
                },
                ParamSpec {
                    name: "team",
                    kind: ParamKind::String,
                    doc: "the team",
                },
            ]
        }
        fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
            Err("unused".into())
        }
    }

    fn reg() -> Registry {
        Registry::default().with(Fake)
    }

    #[test]
    fn valid_file_keeps_order_values_and_origins() {
        let text = "# team\n[[plugin]]\nid = \"atm-identity\"\nrequired = true\nidentity = \"arch\"\n";
        let got = parse(text, "c.toml", &reg()).unwrap();
        assert_eq!(got.len(), 1);
        assert!(got[0].required);
        assert_eq!(got[0].line, 2);
        assert_eq!(got[0].params.str("identity"), Some("arch"));
        assert_eq!(got[0].params.origin("identity"), Some("c.toml:5"));
    }

    #[test]
    fn unknown_plugin_names_file_line_and_suggests() {
        let err = parse("\n[[plugin]]\nid = \"atm-identiy\"\n", "c.toml", &reg()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("c.toml:3: unknown plugin `atm-identiy`"), "{msg}");
        assert!(msg.contains("did you mean `atm-identity`?"), "{msg}");
    }

    #[test]
    fn unknown_key_and_wrong_type_are_refused_with_line() {
        let err = parse(
            "[[plugin]]\nid = \"atm-identity\"\nteem = \"x\"\n",
            "c.toml",
            &reg(),
        )
        .unwrap_err();
        assert!(
            err.to_string().starts_with("c.toml:3: unknown key `teem`"),
            "{err}"
        );
        assert!(err.to_string().contains("did you mean `team`?"), "{err}");
        let err = parse(
            "[[plugin]]\nid = \"atm-identity\"\nidentity = 3\n",
            "c.toml",
            &reg(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("c.toml:3: `identity` of plugin `atm-identity` must be a string, not integer"),
            "{err}"
        );
    }

    #[test]
    fn a_value_outside_a_choice_is_refused_with_a_suggestion() {
        struct Mail;
        impl PluginFactory for Mail {
            fn id(&self) -> &'static str {
                "atm-mail"
            }
            fn description(&self) -> &'static str {
                "test"
            }
            fn params(&self) -> &'static [ParamSpec] {
                &[ParamSpec {
                    name: "backend",
                    kind: ParamKind::OneOf(&["files", "atm-cli"]),
                    doc: "where mail lives",
                }]
            }
            fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
                Err("unused".into())
            }
        }
        let reg = Registry::default().with(Mail);
        let err = parse(
            "[[plugin]]\nid = \"atm-mail\"\nbackend = \"atm_cli\"\n",
            "c.toml",
            &reg,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with(
                "c.toml:3: `backend` of plugin `atm-mail` must be one of `files`, `atm-cli`, not `atm_cli`"
            ),
            "{msg}"
        );
        assert!(msg.contains("did you mean `atm-cli`?"), "{msg}");
        let ok = parse(
            "[[plugin]]\nid = \"atm-mail\"\nbackend = \"files\"\n",
            "c.toml",
            &reg,
        )
        .unwrap();
        assert_eq!(ok[0].params.str("backend"), Some("files"));
    }

    #[test]
    fn syntax_errors_have_a_line() {
        let err = parse("[[plugin]]\nid = \n", "c.toml", &reg()).unwrap_err();
        assert!(matches!(err, ComposerError::Invalid { line: 2, .. }), "{err}");
    }

    #[test]
    fn top_level_junk_and_missing_id_are_refused() {
        assert!(
            parse("x = 1\n", "c", &reg())
                .unwrap_err()
                .to_string()
                .contains("unknown top-level key `x`")
        );
        assert!(
            parse("[[plugin]]\nrequired = true\n", "c", &reg())
                .unwrap_err()
                .to_string()
                .contains("has no `id`")
        );
    }

    #[test]
    fn find_prefers_explicit_then_workspace_then_user_config() {
        let ws = tempfile::tempdir().unwrap();
        let cfg = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cfg.path().join("acplb")).unwrap();
        std::fs::write(cfg.path().join("acplb/composer.toml"), "").unwrap();
        let user = find(None, Some(ws.path()), Some(cfg.path())).unwrap();
        assert!(matches!(user, Source::UserConfig(_)));
        std::fs::write(ws.path().join("composer.toml"), "").unwrap();
        assert!(matches!(
            find(None, Some(ws.path()), Some(cfg.path())),
            Some(Source::Workspace(_))
        ));
        let flag = Source::Flag("/x.toml".into());
        assert_eq!(find(Some(flag.clone()), Some(ws.path()), None), Some(flag));
    }
}
