//! A worker's plugin pipeline: `atm-identity` claiming exactly the agent's name (a collision is
//! an error, never a `-2`) and `atm-mail`, then the plugins of the agent's own `composer` file.
//! Written as a composer file of its own under the state dir, so the usual validation runs.
//! The same file tells where the worker's mail lives ([`Prepared::mail`]), so the worker reads
//! the mailbox its plugins use; it is read once per run of the worker, on the blocking pool.

use std::path::{Path, PathBuf};

use acplb_worker::config::AgentConfig;
use anyhow::Context as _;
use toml::{Table, Value};

const IDENTITY: &str = "atm-identity";
const MAIL: &str = "atm-mail";
/// `atm-mail`'s backend that runs the `atm` CLI.
const ATM_CLI: &str = "atm-cli";

/// What one run of a worker is built from: its composer file, written, and where its mail
/// lives. The agent's own composer file is read and parsed once, here. It blocks (reads,
/// writes and fsyncs files): call it on the blocking pool.
#[derive(Debug)]
pub(super) struct Prepared {
    /// The worker's composer file.
    pub(super) composer: PathBuf,
    /// Where its mail lives.
    pub(super) mail: MailSpec,
}

/// Writes the worker's composer file and tells where its mail lives.
pub(super) fn prepare(state: &Path, agent: &AgentConfig) -> anyhow::Result<Prepared> {
    let own = match &agent.composer {
        Some(path) => plugins_of(path)?,
        None => Vec::new(),
    };
    let mail = mail_spec(&own);
    let text = compose(agent, own)?;
    let dir = state.join("workers").join("agents");
    acplb_core::sessions::state::create_private_dir(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let composer = dir.join(format!("{}.composer.toml", agent.name));
    acplb_core::sessions::state::write_private_atomic(&composer, text.as_bytes())
        .with_context(|| format!("writing {}", composer.display()))?;
    Ok(Prepared { composer, mail })
}

/// Where a worker's mail lives, as its plugins will see it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct MailSpec {
    /// `atm-mail`'s `backend = "atm-cli"`: mail through the `atm` CLI, not inbox files.
    pub(super) atm_cli: bool,
    /// `atm-identity`'s `atm_home` (exported to the plugins as `ATM_HOME`), if set.
    pub(super) atm_home: Option<PathBuf>,
}

/// The mail settings of the agent's own composer plugins (none: inbox files under
/// `ATM_HOME`). The backend name itself is checked when the worker's plugins are built.
fn mail_spec(own: &[Table]) -> MailSpec {
    let param = |id: &str, key: &str| {
        own.iter()
            .find(|t| id_of(t) == Some(id))
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    MailSpec {
        atm_cli: param(MAIL, "backend").as_deref() == Some(ATM_CLI),
        atm_home: param(IDENTITY, "atm_home").map(PathBuf::from),
    }
}

fn plugins_of(path: &Path) -> anyhow::Result<Vec<Table>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let table: Table =
        toml::from_str(&text).with_context(|| format!("{} is not valid TOML", path.display()))?;
    Ok(match table.get("plugin") {
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_table().cloned()).collect(),
        _ => Vec::new(),
    })
}

fn id_of(t: &Table) -> Option<&str> {
    t.get("id").and_then(Value::as_str)
}

fn compose(agent: &AgentConfig, own: Vec<Table>) -> anyhow::Result<String> {
    let mut identity = own
        .iter()
        .find(|t| id_of(t) == Some(IDENTITY))
        .cloned()
        .unwrap_or_default();
    identity.insert("id".into(), IDENTITY.into());
    identity.insert("required".into(), true.into());
    identity.insert("identity".into(), agent.name.name().into());
    identity.insert("team".into(), agent.name.team().into());
    identity.insert("exclusive".into(), true.into());
    let mut plugins = vec![Value::Table(identity)];
    if !own.iter().any(|t| id_of(t) == Some(MAIL)) {
        let mut mail = Table::new();
        mail.insert("id".into(), MAIL.into());
        mail.insert("required".into(), true.into());
        plugins.push(Value::Table(mail));
    }
    plugins.extend(
        own.into_iter()
            .filter(|t| id_of(t) != Some(IDENTITY))
            .map(Value::Table),
    );
    let mut file = Table::new();
    file.insert("plugin".into(), Value::Array(plugins));
    Ok(format!(
        "# Written by `acplb worker` for {}; edit workers.toml or the agent's `composer` file instead.\n{}",
        agent.name,
        toml::to_string(&file)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(composer: Option<PathBuf>) -> AgentConfig {
        AgentConfig {
            name: acplb_worker::config::AgentName::parse("bob@core").unwrap(),
            enabled: true,
            prompt_template: "{message}".into(),
            policy: acplb_worker::config::Policy::Queue,
            max_concurrent: 4,
            cwd: "/".into(),
            mode: "auto".into(),
            model: None,
            transport: None,
            composer,
            accept_from_non_members: false,
            origin: String::new(),
        }
    }

    #[test]
    fn the_identity_is_forced_exclusive_and_first_and_other_plugins_follow() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("c.toml");
        std::fs::write(
            &own,
            "[[plugin]]\nid = \"audit\"\n[[plugin]]\nid = \"atm-identity\"\nidentity = \"mallory\"\natm_home = \"/x\"\n",
        )
        .unwrap();
        let text = compose(&agent(Some(own.clone())), plugins_of(&own).unwrap()).unwrap();
        let parsed: Table = toml::from_str(&text).unwrap();
        let plugins = parsed["plugin"].as_array().unwrap();
        let ids: Vec<&str> = plugins.iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["atm-identity", "atm-mail", "audit"]);
        assert_eq!(plugins[0]["identity"].as_str(), Some("bob"));
        assert_eq!(plugins[0]["team"].as_str(), Some("core"));
        assert_eq!(plugins[0]["exclusive"].as_bool(), Some(true));
        assert_eq!(
            plugins[0]["atm_home"].as_str(),
            Some("/x"),
            "the agent's own atm_home is kept"
        );
        let state = tempfile::tempdir().unwrap();
        let prepared = prepare(state.path(), &agent(Some(own))).unwrap();
        assert_eq!(std::fs::read_to_string(&prepared.composer).unwrap(), text);
        assert_eq!(
            prepared.mail,
            MailSpec {
                atm_cli: false,
                atm_home: Some("/x".into())
            }
        );
    }

    #[test]
    fn the_agents_atm_mail_backend_decides_where_its_mail_lives() {
        assert_eq!(mail_spec(&[]), MailSpec::default());
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("c.toml");
        std::fs::write(&own, "[[plugin]]\nid = \"atm-mail\"\nbackend = \"atm-cli\"\n").unwrap();
        let spec = mail_spec(&plugins_of(&own).unwrap());
        assert!(spec.atm_cli);
        assert_eq!(spec.atm_home, None);
    }
}
