//! The plugin pipeline as the binary sets it up: which composer file was named (`--composer`,
//! else `ACPLB_COMPOSER`), validated against the built-in plugins before anything starts.

use std::path::{Path, PathBuf};

use acplb_core::plugin::ComposerPipelines;
use acplb_core::plugin::composer::{self, ComposerError, Source};
use acplb_core::plugin::registry::BuildContext;

/// The composer file named by the flag, else by `$ACPLB_COMPOSER`.
pub(crate) fn explicit_source(flag: Option<&Path>) -> Option<Source> {
    if let Some(path) = flag {
        return Some(Source::Flag(path.to_owned()));
    }
    std::env::var_os("ACPLB_COMPOSER")
        .filter(|v| !v.is_empty())
        .map(|v| Source::Env(PathBuf::from(v)))
}

/// The user config dir (`$XDG_CONFIG_HOME`, else `~/.config`).
pub(crate) fn user_config_dir() -> Option<PathBuf> {
    composer::user_config_dir(|key| std::env::var(key).ok())
}

/// acplb's state directory (`$XDG_STATE_HOME/acplb`, else `~/.local/state/acplb`).
pub(crate) fn state_dir() -> Option<PathBuf> {
    composer::state_dir(|key| std::env::var(key).ok())
}

/// Every built-in plugin: the agent-team ones and `session-summary`.
pub(crate) fn plugins() -> acplb_core::plugin::registry::Registry {
    plugins_as(None)
}

/// The built-in plugins, `atm-identity` claiming `identity` when given (`--identity`).
fn plugins_as(identity: Option<String>) -> acplb_core::plugin::registry::Registry {
    acplb_atm::plugins::registry_for(std::sync::Arc::new(acplb_atm::env::ProcessEnv), identity)
        .with(acplb_core::plugin::summary::SessionSummaryFactory)
}

/// The built-in plugins over `explicit` (validated now) or, per session, the workspace's (when
/// trusted) or the user's composer file.
pub(crate) fn load(explicit: Option<Source>) -> Result<ComposerPipelines, ComposerError> {
    load_as(explicit, None)
}

/// [`load`], with every session's `atm-identity` identity set to `identity` when given.
pub(crate) fn load_as(
    explicit: Option<Source>,
    identity: Option<String>,
) -> Result<ComposerPipelines, ComposerError> {
    Ok(
        ComposerPipelines::new(plugins_as(identity), explicit, user_config_dir())?
            .with_state_dir(state_dir()),
    )
}

/// Builds the explicit file's plugins once for `cwd` and drops them: building only resolves
/// values (it may read files, but writes and claims nothing), and a required plugin that
/// cannot start (a bad limit, no home directory, a wrong order) stops acplb now instead of
/// failing every session.
pub(crate) fn dry_build(pipelines: &ComposerPipelines, cwd: &Path) -> Result<(), ComposerError> {
    if let Some(config) = pipelines.config_for(cwd)? {
        pipelines.build(&config, &BuildContext::new(cwd, ""))?;
    }
    Ok(())
}
