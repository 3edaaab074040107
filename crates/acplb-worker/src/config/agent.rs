//! One `[workers.agents."name@team"]` table: its keys, their values, and the rule tying
//! `max_concurrent` to the `concurrent` policy. A repository's override is read with the same
//! code for the keys it may set.

use std::path::{Path, PathBuf};

use acplb_core::permission::Mode;
use toml::de::DeTable;

use super::error::{ConfigError, Located, closest, unknown_key_hint};
use super::model::{
    AgentConfig, DEFAULT_MAX_CONCURRENT, DEFAULT_MODE, DEFAULT_PROMPT_TEMPLATE, MAX_CONCURRENT_LIMIT, Policy,
};
use super::name::AgentName;
use super::template::check_template;
use super::validate;
use super::value::{self, Value, entries};

/// The keys a repository's `.atm/config.toml` may set for an agent.
pub(crate) const SHARED_KEYS: [&str; 4] =
    ["prompt_template", "concurrency_policy", "max_concurrent", "model"];

/// The keys only the machine file may set: where an agent runs, with what rights, and whose
/// mail it takes.
pub(crate) const MACHINE_KEYS: [&str; 6] = [
    "enabled",
    "cwd",
    "mode",
    "transport",
    "composer",
    "accept_from_non_members",
];

/// The transports an agent may name.
const TRANSPORTS: [&str; 2] = ["app-server", "exec"];

/// What one file's table of an agent set that matters once the table ends: where it set
/// `max_concurrent` (the value's byte offset).
#[derive(Debug, Default)]
pub(crate) struct Layer {
    max_at: Option<usize>,
}

/// Reads the agent table of the machine file; `header` is the offset of its name.
pub(crate) fn machine_agent(
    at: &Located,
    name: AgentName,
    table: &DeTable<'_>,
    header: usize,
    home: Option<&Path>,
) -> Result<AgentConfig, ConfigError> {
    let mut agent = AgentConfig {
        name,
        enabled: true,
        prompt_template: DEFAULT_PROMPT_TEMPLATE.to_owned(),
        policy: Policy::Queue,
        max_concurrent: DEFAULT_MAX_CONCURRENT,
        cwd: PathBuf::new(),
        mode: DEFAULT_MODE.to_owned(),
        model: None,
        transport: None,
        composer: None,
        accept_from_non_members: false,
        origin: at.origin(header),
    };
    let mut layer = Layer::default();
    let mut has_cwd = false;
    for (key, key_at, v) in entries(table) {
        if apply_shared(at, key, v, &mut agent, &mut layer)? {
            continue;
        }
        match key {
            "enabled" => agent.enabled = value::boolean(at, key, v)?,
            "cwd" => {
                agent.cwd = validate::cwd(at, v, home)?;
                has_cwd = true;
            }
            "mode" => {
                let modes: Vec<&str> = Mode::ALL.iter().map(|m| m.id()).collect();
                agent.mode = one_of(at, key, v, &modes)?;
            }
            "transport" => agent.transport = Some(one_of(at, key, v, &TRANSPORTS)?),
            "composer" => agent.composer = Some(validate::composer(at, v, home)?),
            "accept_from_non_members" => agent.accept_from_non_members = value::boolean(at, key, v)?,
            _ => {
                let known: Vec<&str> = SHARED_KEYS.iter().chain(&MACHINE_KEYS).copied().collect();
                return Err(at.invalid(
                    key_at,
                    format!("unknown key `{key}` in agent `{}`", agent.name),
                    Some(unknown_key_hint(key, &known, "an agent takes")),
                ));
            }
        }
    }
    if !has_cwd {
        return Err(at.invalid(
            header,
            format!("agent `{}` has no `cwd`", agent.name),
            Some("add the repository it works in, e.g. `cwd = \"~/src/project\"`".into()),
        ));
    }
    finish_layer(at, &mut agent, &layer)?;
    Ok(agent)
}

/// Applies `key` when it is one a repository may also set; `false` when it is not.
pub(crate) fn apply_shared(
    at: &Located,
    key: &str,
    v: &Value<'_>,
    agent: &mut AgentConfig,
    layer: &mut Layer,
) -> Result<bool, ConfigError> {
    match key {
        "prompt_template" => {
            let example = "prompt_template = \"Message from {from}:\\n{message}\"";
            let template = value::string(at, key, v, example)?;
            if let Some((message, hint)) = check_template(&template) {
                return Err(at.invalid(v.span().start, message, Some(hint)));
            }
            agent.prompt_template = template;
        }
        "concurrency_policy" => {
            let words = Policy::ALL.map(Policy::word);
            let word = one_of(at, key, v, &words)?;
            agent.policy = Policy::from_word(&word).unwrap_or_default();
        }
        "max_concurrent" => {
            let n = value::unsigned(at, key, v, "max_concurrent = 4")?;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            if !(1..=MAX_CONCURRENT_LIMIT).contains(&n) {
                return Err(at.invalid(
                    v.span().start,
                    format!("`max_concurrent` must be between 1 and {MAX_CONCURRENT_LIMIT}, not {n}"),
                    Some("it is how many turns of this agent run at once".into()),
                ));
            }
            agent.max_concurrent = n;
            layer.max_at = Some(v.span().start);
        }
        "model" => {
            let model = value::string(at, key, v, "model = \"gpt-5\"")?;
            if model.trim().is_empty() || model.chars().any(char::is_control) {
                return Err(at.invalid(
                    v.span().start,
                    format!(
                        "`model` `{}` is empty or holds a control character",
                        model.escape_debug()
                    ),
                    Some("name a Codex model, e.g. `model = \"gpt-5\"`, or remove the line".into()),
                ));
            }
            agent.model = Some(model);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Ends one file's table: `max_concurrent` set there under another policy is an error; a
/// policy other than `concurrent` leaves `max_concurrent` at its default, so that an unused
/// number never counts as a change.
pub(crate) fn finish_layer(at: &Located, agent: &mut AgentConfig, layer: &Layer) -> Result<(), ConfigError> {
    if agent.policy == Policy::Concurrent {
        return Ok(());
    }
    if let Some(max_at) = layer.max_at {
        return Err(at.invalid(
            max_at,
            format!(
                "`max_concurrent` is set but the policy of `{}` is `{}`",
                agent.name, agent.policy
            ),
            Some(
                "`max_concurrent` applies only with `concurrency_policy = \"concurrent\"`: set that or remove `max_concurrent`"
                    .into(),
            ),
        ));
    }
    agent.max_concurrent = DEFAULT_MAX_CONCURRENT;
    Ok(())
}

/// A string that must be one of `allowed`.
fn one_of(at: &Located, key: &str, v: &Value<'_>, allowed: &[&str]) -> Result<String, ConfigError> {
    let example = format!("{key} = \"{}\"", allowed.first().copied().unwrap_or_default());
    let given = value::string(at, key, v, &example)?;
    if allowed.contains(&given.as_str()) {
        return Ok(given);
    }
    let hint = closest(&given, allowed.iter().copied()).map(|near| format!("did you mean `{near}`?"));
    Err(at.invalid(
        v.span().start,
        format!(
            "unknown {key} `{}`; it is one of: {}",
            given.escape_debug(),
            allowed.join(", ")
        ),
        hint,
    ))
}
