//! The machine file, `workers.toml`: the `[workers]` table, its settings and its agents, every
//! key checked with its line.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toml::de::DeTable;

use super::agent::machine_agent;
use super::error::{ConfigError, Located, unknown_key_hint};
use super::model::WorkersConfig;
use super::name::AgentName;
use super::validate;
use super::value::{self, Value, entries};

/// The keys of `[workers]`.
const SETTINGS_KEYS: [&str; 8] = [
    "enabled",
    "log_dir",
    "inactivity_timeout_ms",
    "health_check_interval_secs",
    "max_restart_attempts",
    "restart_backoff_secs",
    "shutdown_timeout_secs",
    "agents",
];

/// Parses TOML text, a syntax error becoming an error at its line.
pub(crate) fn document<'i>(at: &Located, text: &'i str, hint: &str) -> Result<DeTable<'i>, ConfigError> {
    DeTable::parse(text).map(toml::Spanned::into_inner).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        at.invalid(offset, e.message().trim().to_owned(), Some(hint.to_owned()))
    })
}

/// Reads the machine file's text (no repository overrides yet).
pub(crate) fn machine(at: &Located, text: &str, home: Option<&Path>) -> Result<WorkersConfig, ConfigError> {
    let root = document(
        at,
        text,
        "fix the TOML syntax of this line (agent names need quotes: `[workers.agents.\"bob@myteam\"]`)",
    )?;
    let mut config = WorkersConfig::default();
    for (key, key_at, v) in entries(&root) {
        if key != "workers" {
            return Err(at.invalid(
                key_at,
                format!("unknown top-level key `{key}`"),
                Some(
                    "the file holds one `[workers]` table and its `[workers.agents.\"name@team\"]` tables"
                        .into(),
                ),
            ));
        }
        let workers = value::table(at, key, v, "[workers]")?;
        workers_table(at, workers, home, &mut config)?;
    }
    Ok(config)
}

fn workers_table(
    at: &Located,
    table: &DeTable<'_>,
    home: Option<&Path>,
    config: &mut WorkersConfig,
) -> Result<(), ConfigError> {
    let s = &mut config.settings;
    for (key, key_at, v) in entries(table) {
        match key {
            "enabled" => s.enabled = value::boolean(at, key, v)?,
            "log_dir" => {
                let example = "log_dir = \"~/.local/state/acplb/workers/logs\"";
                s.log_dir = Some(validate::absolute_path(at, key, v, home, example)?);
            }
            "inactivity_timeout_ms" => {
                s.inactivity_timeout = Duration::from_millis(count(at, key, v, 300_000, false)?);
            }
            "health_check_interval_secs" => {
                s.health_check_interval = Duration::from_secs(count(at, key, v, 30, true)?);
            }
            "max_restart_attempts" => {
                let n = count(at, key, v, 3, false)?;
                s.max_restart_attempts = u32::try_from(n).map_err(|_| {
                    at.invalid(
                        v.span().start,
                        format!("`max_restart_attempts` is too large: {n}"),
                        Some("e.g. `max_restart_attempts = 3`".into()),
                    )
                })?;
            }
            "restart_backoff_secs" => s.restart_backoff = Duration::from_secs(count(at, key, v, 5, false)?),
            "shutdown_timeout_secs" => {
                s.shutdown_timeout = Duration::from_secs(count(at, key, v, 10, true)?);
            }
            "agents" => {
                let example = "[workers.agents.\"name@team\"]";
                config.agents = agents(at, value::table(at, key, v, example)?, home)?;
            }
            _ => {
                return Err(at.invalid(
                    key_at,
                    format!("unknown key `{key}` in `[workers]`"),
                    Some(unknown_key_hint(key, &SETTINGS_KEYS, "`[workers]` takes")),
                ));
            }
        }
    }
    Ok(())
}

/// A non-negative whole number; `nonzero` refuses 0.
fn count(at: &Located, key: &str, v: &Value<'_>, default: u64, nonzero: bool) -> Result<u64, ConfigError> {
    let n = value::unsigned(at, key, v, &format!("{key} = {default}"))?;
    if nonzero && n == 0 {
        return Err(at.invalid(
            v.span().start,
            format!("`{key}` must be at least 1, not 0"),
            Some(format!(
                "remove the line for the default ({default}) or give a positive number"
            )),
        ));
    }
    Ok(n)
}

fn agents(
    at: &Located,
    table: &DeTable<'_>,
    home: Option<&Path>,
) -> Result<BTreeMap<AgentName, super::AgentConfig>, ConfigError> {
    let mut out = BTreeMap::new();
    for (key, key_at, v) in entries(table) {
        let name = AgentName::parse(key).map_err(|e| {
            at.invalid(
                key_at,
                e,
                Some("each agent is a `[workers.agents.\"name@team\"]` table".into()),
            )
        })?;
        let example = format!("[workers.agents.\"{name}\"]");
        let agent_table = value::table(at, key, v, &example)?;
        let agent = machine_agent(at, name.clone(), agent_table, key_at, home)?;
        out.insert(name, agent);
    }
    Ok(out)
}
