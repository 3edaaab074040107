//! `workers.toml`: the daemon and its agents, read, checked line by line, and tuned by trusted
//! repositories.
//!
//! ```toml
//! [workers]
//! enabled = true
//! health_check_interval_secs = 30
//!
//! [workers.agents."bob@myteam"]
//! cwd = "~/src/project"
//! prompt_template = "Message from {from} ({summary}):\n{message}"
//! concurrency_policy = "concurrent"
//! max_concurrent = 4
//! mode = "auto"
//! accept_from_non_members = false
//! ```
//!
//! The machine file lives at `$XDG_CONFIG_HOME/acplb/workers.toml` (else
//! `~/.config/acplb/workers.toml`). An agent's repository may override `prompt_template`,
//! `concurrency_policy`, `max_concurrent` and `model` in its `.atm/config.toml`, once the
//! workspace is trusted (`acplb trust DIR`).

mod agent;
mod diff;
mod error;
mod model;
mod name;
mod parse;
mod repo;
mod template;
mod validate;
mod value;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use diff::{Changes, diff, settings_changed};
pub use error::ConfigError;
pub use model::{
    AgentConfig, DEFAULT_MAX_CONCURRENT, DEFAULT_MODE, DEFAULT_PROMPT_TEMPLATE, MAX_CONCURRENT_LIMIT, Policy,
    WorkerSettings, WorkersConfig,
};
pub use name::AgentName;
pub use template::{Bounded, Fields, MAX_TEMPLATE_BYTES, TooLong, render_prompt};

/// The machine file's name under `<config dir>/acplb/`.
pub const FILE_NAME: &str = "workers.toml";

/// `$XDG_CONFIG_HOME/acplb/workers.toml`, else `~/.config/acplb/workers.toml` (`env` looks a
/// variable up); `None` when neither variable is set.
pub fn default_path(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    acplb_core::plugin::composer::user_config_dir(env).map(|d| d.join("acplb").join(FILE_NAME))
}

/// Reads `path`, checks it and applies the overrides of the trusted repositories (`trusted`
/// says whether an agent's `cwd` is a trusted workspace).
pub fn load(path: &Path, trusted: &dyn Fn(&Path) -> bool) -> Result<WorkersConfig, ConfigError> {
    let file = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ConfigError::Missing {
                file,
                hint: "create it with one table per agent, e.g. `[workers.agents.\"bob@myteam\"]` \
                       and the line `cwd = \"~/src/project\"`"
                    .into(),
            });
        }
        Err(e) => {
            return Err(ConfigError::Read {
                file,
                message: e.to_string(),
            });
        }
    };
    let text = error::utf8(path, &bytes, FILE_NAME)?;
    parse(text, path, trusted)
}

/// Checks the text of the machine file (`origin` names it in errors) and applies the overrides
/// of the trusted repositories. Touches the file system only to check `cwd` and `composer`
/// and to read the agents' `.atm/config.toml`; `~/` is expanded with `$HOME`.
pub fn parse(
    text: &str,
    origin: &Path,
    trusted: &dyn Fn(&Path) -> bool,
) -> Result<WorkersConfig, ConfigError> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    parse_with_home(text, origin, trusted, home.as_deref())
}

/// [`parse`] with `~` meaning `home`.
fn parse_with_home(
    text: &str,
    origin: &Path,
    trusted: &dyn Fn(&Path) -> bool,
    home: Option<&Path>,
) -> Result<WorkersConfig, ConfigError> {
    let at = error::Located::new(origin, text);
    let mut config = parse::machine(&at, text, home)?;
    repo::apply(&mut config, origin, trusted)?;
    Ok(config)
}
