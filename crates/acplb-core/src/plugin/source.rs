//! Where each session's pipeline comes from: the composer file chosen at startup, or else the
//! one found in the session's workspace (only when the user trusts that workspace) or in the
//! user config dir, validated and built per session.

use std::path::{Path, PathBuf};

use super::composer::{self, ComposerConfig, ComposerError, Source};
use super::paths::{self, PathRules};
use super::registry::{BuildContext, Registry, Resolved};
use super::trust::TrustList;
use super::{Pipeline, PluginEntry};

/// A plugin id and the values it resolved.
pub type PluginResolution = (String, Vec<Resolved>);

/// Something the user should see when a session starts (a workspace file that was ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionNotice {
    /// One line that stands alone.
    pub title: String,
    /// What to do about it.
    pub detail: String,
}

/// A session's plugins, and what the user should be told about them.
#[derive(Debug, Default)]
pub struct SessionPlugins {
    /// The pipeline the session runs.
    pub pipeline: Pipeline,
    /// Notices for the editor, sent right after `session/new` is answered.
    pub notices: Vec<SessionNotice>,
}

/// Builds a pipeline for each new session. Called on the blocking pool: finding a session's
/// plugins reads files (its workspace's composer file, the trust list, the user's file).
pub trait PipelineSource: Send + Sync {
    /// The plugins of a session in `cwd`; an error refuses the session.
    fn for_session(&self, cwd: &Path, session_id: &str) -> Result<SessionPlugins, ComposerError>;
}

/// No plugins at all.
#[derive(Debug, Default)]
pub struct NoPlugins;

impl PipelineSource for NoPlugins {
    fn for_session(&self, _cwd: &Path, _session_id: &str) -> Result<SessionPlugins, ComposerError> {
        Ok(SessionPlugins::default())
    }
}

/// A workspace's own `composer.toml` that was not honoured, because the workspace is not on the
/// user's trust list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// The file.
    pub file: PathBuf,
    /// The workspace.
    pub workspace: PathBuf,
    /// Set when the trust list itself could not be read.
    pub trust_error: Option<String>,
}

impl Ignored {
    /// The notice for the editor (and the log).
    pub fn notice(&self) -> SessionNotice {
        let title = match &self.trust_error {
            None => format!(
                "acplb ignored {}: this workspace is not trusted, so its plugins do not run",
                self.file.display()
            ),
            Some(e) => format!(
                "acplb ignored {}: the trust list could not be read ({e})",
                self.file.display()
            ),
        };
        let detail = format!(
            "A composer.toml inside a workspace is repository content. If you trust this repository, run `acplb trust {}` and start a new session; `acplb config check --workspace {0}` shows what it would run.",
            shell_word(&self.workspace)
        );
        SessionNotice { title, detail }
    }
}

/// `path` as one shell word, quoted when it needs it (for commands the user copies).
fn shell_word(path: &Path) -> String {
    let s = path.display().to_string();
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | '@'))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The composer configuration a session in some workspace gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    /// The configuration to run; `None`: no plugins.
    pub config: Option<ComposerConfig>,
    /// The workspace's own file, when it was passed over.
    pub ignored: Option<Ignored>,
}

/// Pipelines from `composer.toml` files.
#[derive(Debug)]
pub struct ComposerPipelines {
    registry: Registry,
    /// Chosen by flag or environment, parsed at startup.
    explicit: Option<ComposerConfig>,
    config_dir: Option<PathBuf>,
    state_dir: Option<PathBuf>,
}

impl ComposerPipelines {
    /// Loads and validates the explicit file now (a bad one stops acplb from starting);
    /// otherwise each session looks in its workspace (when trusted), then in `config_dir`.
    pub fn new(
        registry: Registry,
        explicit: Option<Source>,
        config_dir: Option<PathBuf>,
    ) -> Result<Self, ComposerError> {
        let explicit = explicit.map(|s| composer::load(s, &registry)).transpose()?;
        Ok(Self {
            registry,
            explicit,
            config_dir,
            state_dir: None,
        })
    }

    /// Pipelines whose explicit file was loaded already ([`composer::load`], with a registry
    /// of the same plugins): a caller that loads it on the blocking pool (the registry does not
    /// cross threads) builds the pipelines on its own thread with this.
    pub fn with_explicit(registry: Registry, explicit: ComposerConfig, config_dir: Option<PathBuf>) -> Self {
        Self {
            registry,
            explicit: Some(explicit),
            config_dir,
            state_dir: None,
        }
    }

    /// Also lets a trusted workspace's file name paths in acplb's state directory.
    #[must_use]
    pub fn with_state_dir(mut self, state_dir: Option<PathBuf>) -> Self {
        self.state_dir = state_dir;
        self
    }

    /// The trust list's file, when there is a user config dir.
    pub fn trust_file(&self) -> Option<PathBuf> {
        self.config_dir.as_deref().map(TrustList::file)
    }

    /// The configuration a session in `cwd` would use, or `None` for no plugins.
    pub fn config_for(&self, cwd: &Path) -> Result<Option<ComposerConfig>, ComposerError> {
        Ok(self.lookup(cwd)?.config)
    }

    /// The configuration a session in `cwd` gets: the explicit file, else the workspace's
    /// own when the workspace is trusted, else the user's; with every path checked for `cwd`.
    pub fn lookup(&self, cwd: &Path) -> Result<Lookup, ComposerError> {
        if let Some(c) = &self.explicit {
            let config = self.with_paths(c.clone(), cwd, false)?;
            return Ok(Lookup {
                config: Some(config),
                ignored: None,
            });
        }
        let mut ignored = None;
        if let Some(file) = composer::workspace_file(cwd) {
            let trusted = self
                .trust_file()
                .map_or(Ok(false), |f| TrustList::load(&f).map(|list| list.contains(cwd)));
            if let Ok(true) = trusted {
                return Ok(Lookup {
                    config: self.workspace_config(cwd)?,
                    ignored: None,
                });
            }
            ignored = Some(Ignored {
                file,
                workspace: cwd.to_owned(),
                trust_error: trusted.err().map(|e| e.to_string()),
            });
        }
        let config = match self.config_dir.as_deref().and_then(composer::user_file) {
            Some(file) => {
                let config = composer::load(Source::UserConfig(file), &self.registry)?;
                Some(self.with_paths(config, cwd, false)?)
            }
            None => None,
        };
        Ok(Lookup { config, ignored })
    }

    /// The workspace's own file as a session would get it once the workspace is trusted
    /// (confined paths and all), whether or not it is trusted now: what `config check` shows
    /// for an ignored file.
    pub fn workspace_config(&self, cwd: &Path) -> Result<Option<ComposerConfig>, ComposerError> {
        composer::workspace_file(cwd)
            .map(|file| {
                let config = composer::load(Source::Workspace(file), &self.registry)?;
                self.with_paths(config, cwd, true)
            })
            .transpose()
    }

    /// `config` with every path value resolved for a session in `cwd` (see [`paths`]);
    /// `confine`: the file is workspace content, so its paths stay in the workspace or acplb's
    /// state directory.
    fn with_paths(
        &self,
        mut config: ComposerConfig,
        cwd: &Path,
        confine: bool,
    ) -> Result<ComposerConfig, ComposerError> {
        let roots: Vec<PathBuf> = std::iter::once(cwd.to_owned())
            .chain(self.state_dir.clone())
            .collect();
        let rules = PathRules {
            base: cwd,
            confine: confine.then_some(roots.as_slice()),
        };
        let file = config.source.path().display().to_string();
        for plugin in &mut config.plugins {
            let Some(factory) = self.registry.get(&plugin.id) else {
                continue;
            };
            for spec in factory.params().iter().filter(|s| s.kind.is_path()) {
                let Some(param) = plugin.params.values.get_mut(spec.name) else {
                    continue;
                };
                let line = param.line;
                let invalid = |message: String, hint: String| ComposerError::Invalid {
                    file: file.clone(),
                    line,
                    message: format!("`{}` of plugin `{}` {message}", spec.name, plugin.id),
                    hint: Some(hint),
                };
                let value = param.value.as_str().unwrap_or_default();
                let resolved =
                    paths::resolve(value, spec.kind, rules).map_err(|p| invalid(p.message, p.hint))?;
                let Some(resolved) = resolved.to_str() else {
                    return Err(invalid(
                        format!("resolves to `{}`, which is not UTF-8", resolved.display()),
                        "name a path whose every part is UTF-8".into(),
                    ));
                };
                param.value = toml::Value::String(resolved.to_owned());
            }
        }
        Ok(config)
    }

    /// Builds every plugin of `config`; also returns what each resolved, for `config check`.
    /// Building only resolves values, so any failure is a configuration error, required plugin
    /// or not (`required` is about failures once the session runs).
    pub fn build(
        &self,
        config: &ComposerConfig,
        ctx: &BuildContext,
    ) -> Result<(Pipeline, Vec<PluginResolution>), ComposerError> {
        let mut entries = Vec::new();
        // Each plugin sees what the ones before it resolved (and only those).
        let mut ctx = BuildContext {
            earlier: Vec::new(),
            ..ctx.clone()
        };
        for p in &config.plugins {
            let Some(factory) = self.registry.get(&p.id) else {
                continue;
            };
            let _span = tracing::debug_span!("plugin", id = %p.id, hook = "build").entered();
            let built = factory.build(&p.params, &ctx).map_err(|message| {
                let which = if p.required { "required" } else { "optional" };
                ComposerError::Invalid {
                    file: config.source.path().display().to_string(),
                    line: p.line,
                    message: format!("{which} plugin `{}` could not start: {message}", p.id),
                    hint: Some(
                        "composer.toml.example documents each plugin, its parameters and the order they go in"
                            .into(),
                    ),
                }
            })?;
            ctx.earlier.push((p.id.clone(), built.resolved));
            entries.push(PluginEntry {
                id: p.id.clone(),
                required: p.required,
                plugin: built.plugin,
            });
        }
        Ok((Pipeline::new(entries), ctx.earlier))
    }
}

impl PipelineSource for ComposerPipelines {
    fn for_session(&self, cwd: &Path, session_id: &str) -> Result<SessionPlugins, ComposerError> {
        let lookup = self.lookup(cwd)?;
        let notices: Vec<SessionNotice> = lookup.ignored.iter().map(Ignored::notice).collect();
        for n in &notices {
            tracing::warn!(session = session_id, "{} ({})", n.title, n.detail);
        }
        let Some(config) = lookup.config else {
            return Ok(SessionPlugins {
                pipeline: Pipeline::default(),
                notices,
            });
        };
        let ctx = BuildContext::new(cwd, session_id);
        let (pipeline, _) = self.build(&config, &ctx)?;
        tracing::info!(session = session_id, plugins = ?pipeline.ids().collect::<Vec<_>>(), source = %config.source.path().display(), "plugin pipeline ready");
        Ok(SessionPlugins { pipeline, notices })
    }
}
