//! Where each session's pipeline comes from: the composer file chosen at startup, or else the
//! one found in the session's workspace or the user config dir, validated and built per session.

use std::path::{Path, PathBuf};

use super::composer::{self, ComposerConfig, ComposerError, Source};
use super::registry::{BuildContext, Registry, Resolved};
use super::{Pipeline, PluginEntry};

/// A plugin id and the values it resolved.
pub type PluginResolution = (String, Vec<Resolved>);

/// Builds a pipeline for each new session.
pub trait PipelineSource {
    /// The pipeline of a session in `cwd`; an error refuses the session.
    fn for_session(&self, cwd: &Path, session_id: &str) -> Result<Pipeline, ComposerError>;
}

/// No plugins at all.
#[derive(Debug, Default)]
pub struct NoPlugins;

impl PipelineSource for NoPlugins {
    fn for_session(&self, _cwd: &Path, _session_id: &str) -> Result<Pipeline, ComposerError> {
        Ok(Pipeline::default())
    }
}

/// Pipelines from `composer.toml` files.
#[derive(Debug)]
pub struct ComposerPipelines {
    registry: Registry,
    /// Chosen by flag or environment, validated at startup.
    explicit: Option<ComposerConfig>,
    config_dir: Option<PathBuf>,
}

impl ComposerPipelines {
    /// Loads and validates the explicit file now (a bad one stops acplb from starting);
    /// otherwise each session looks in its workspace, then in `config_dir`.
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
        })
    }

    /// The configuration a session in `cwd` would use, or `None` for no plugins.
    pub fn config_for(&self, cwd: &Path) -> Result<Option<ComposerConfig>, ComposerError> {
        if let Some(c) = &self.explicit {
            return Ok(Some(c.clone()));
        }
        composer::find(None, Some(cwd), self.config_dir.as_deref())
            .map(|source| composer::load(source, &self.registry))
            .transpose()
    }

    /// Builds every plugin of `config`; also returns what each resolved, for `config check`.
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
            match factory.build(&p.params, &ctx) {
                Ok(built) => {
                    ctx.earlier.push((p.id.clone(), built.resolved));
                    entries.push(PluginEntry {
                        id: p.id.clone(),
                        required: p.required,
                        plugin: built.plugin,
                    });
                }
                Err(message) if p.required => {
                    return Err(ComposerError::Invalid {
                        file: config.source.path().display().to_string(),
                        line: p.line,
                        message: format!("required plugin `{}` could not start: {message}", p.id),
                        hint: None,
                    });
                }
                Err(message) => {
                    tracing::warn!(plugin = %p.id, %message, "optional plugin could not start; skipped");
                }
            }
        }
        Ok((Pipeline::new(entries), ctx.earlier))
    }
}

impl PipelineSource for ComposerPipelines {
    fn for_session(&self, cwd: &Path, session_id: &str) -> Result<Pipeline, ComposerError> {
        let Some(config) = self.config_for(cwd)? else {
            return Ok(Pipeline::default());
        };
        let ctx = BuildContext::new(cwd, session_id);
        let (pipeline, _) = self.build(&config, &ctx)?;
        tracing::info!(session = session_id, plugins = ?pipeline.ids().collect::<Vec<_>>(), source = %config.source.path().display(), "plugin pipeline ready");
        Ok(pipeline)
    }
}
