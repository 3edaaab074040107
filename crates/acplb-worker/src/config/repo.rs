//! Repository overrides: `<agent cwd>/.atm/config.toml` may tune how an agent talks
//! (`prompt_template`, `concurrency_policy`, `max_concurrent`, `model`) in
//! `[workers.agents."name@team"]` tables. The file is repository content, so it counts only in
//! a trusted workspace, and never sets where an agent runs or with what rights: those keys
//! belong to the machine file alone. Its other tables (ATM's `[core]` and so on) are not ours
//! and are left alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::DeTable;

use super::agent::{Layer, MACHINE_KEYS, SHARED_KEYS, apply_shared, finish_layer};
use super::error::{ConfigError, Located, unknown_key_hint, utf8};
use super::model::WorkersConfig;
use super::name::AgentName;
use super::parse::document;
use super::value::{self, entries};

/// The repository file, relative to an agent's `cwd`.
pub(crate) const REPO_FILE: &str = ".atm/config.toml";

/// Applies the repository files of every agent's `cwd`; `machine` names the machine file in
/// errors about keys that belong there.
pub(crate) fn apply(
    config: &mut WorkersConfig,
    machine: &Path,
    trusted: &dyn Fn(&Path) -> bool,
) -> Result<(), ConfigError> {
    let mut by_cwd: BTreeMap<PathBuf, Vec<AgentName>> = BTreeMap::new();
    for agent in config.agents.values() {
        by_cwd
            .entry(agent.cwd.clone())
            .or_default()
            .push(agent.name.clone());
    }
    for (cwd, names) in by_cwd {
        let file = cwd.join(REPO_FILE);
        if !file.exists() {
            continue;
        }
        if !trusted(&cwd) {
            config.notes.push(format!(
                "ignored {}: workspace not trusted (acplb trust {})",
                file.display(),
                cwd.display()
            ));
            continue;
        }
        let bytes = std::fs::read(&file).map_err(|e| ConfigError::Read {
            file: file.display().to_string(),
            message: e.to_string(),
        })?;
        let text = utf8(&file, &bytes, REPO_FILE)?;
        let at = Located::new(&file, text);
        let root = document(
            &at,
            text,
            "fix the TOML syntax of the repository's ATM configuration",
        )?;
        let repo = Repo {
            at: &at,
            cwd: &cwd,
            names: &names,
            machine,
        };
        repo.apply(&root, config)?;
    }
    Ok(())
}

/// One trusted repository file.
struct Repo<'a> {
    at: &'a Located,
    cwd: &'a Path,
    /// The machine file's agents working in `cwd`.
    names: &'a [AgentName],
    machine: &'a Path,
}

impl Repo<'_> {
    fn apply(&self, root: &DeTable<'_>, config: &mut WorkersConfig) -> Result<(), ConfigError> {
        let at = self.at;
        let Some((key, _, workers)) = entries(root).into_iter().find(|(k, _, _)| *k == "workers") else {
            return Ok(());
        };
        let workers = value::table(at, key, workers, "[workers.agents.\"name@team\"]")?;
        for (key, key_at, v) in entries(workers) {
            if key != "agents" {
                return Err(self.machine_only(key_at, &format!("`[workers]` key `{key}`")));
            }
            let agents = value::table(at, key, v, "[workers.agents.\"name@team\"]")?;
            for (name, name_at, table) in entries(agents) {
                let name = AgentName::parse(name).map_err(|e| {
                    let hint = "each agent is a `[workers.agents.\"name@team\"]` table";
                    at.invalid(name_at, e, Some(hint.into()))
                })?;
                let example = format!("[workers.agents.\"{name}\"]");
                let table = value::table(at, &name.to_string(), table, &example)?;
                if self.names.contains(&name) {
                    self.agent(&name, table, config)?;
                } else {
                    config.notes.push(format!(
                        "ignored the table of `{name}` at {}: no agent `{name}` in {} works in {}",
                        at.origin(name_at),
                        self.machine.display(),
                        self.cwd.display()
                    ));
                }
            }
        }
        Ok(())
    }

    fn agent(
        &self,
        name: &AgentName,
        table: &DeTable<'_>,
        config: &mut WorkersConfig,
    ) -> Result<(), ConfigError> {
        let at = self.at;
        let Some(agent) = config.agents.get_mut(name) else {
            return Ok(());
        };
        let mut layer = Layer::default();
        for (key, key_at, v) in entries(table) {
            if apply_shared(at, key, v, agent, &mut layer)? {
                continue;
            }
            if MACHINE_KEYS.contains(&key) {
                return Err(self.machine_only(key_at, &format!("`{key}`")));
            }
            return Err(at.invalid(
                key_at,
                format!("unknown key `{key}` in agent `{name}`"),
                Some(unknown_key_hint(key, &SHARED_KEYS, "a repository may set only")),
            ));
        }
        finish_layer(at, agent, &layer)
    }

    fn machine_only(&self, key_at: usize, what: &str) -> ConfigError {
        self.at.invalid(
            key_at,
            format!(
                "{what} may only be set in the machine file ({}), not in a repository",
                self.machine.display()
            ),
            Some(format!(
                "a repository may set only {} for an agent; move the line to {}",
                SHARED_KEYS.join(", "),
                self.machine.display()
            )),
        )
    }
}
