//! What a reload (SIGHUP) changes: which agents to start, stop and restart. Only running agents
//! count, so disabling an agent stops it and enabling one starts it.

use std::collections::BTreeMap;

use super::model::{AgentConfig, WorkersConfig};
use super::name::AgentName;

/// The agents a reload starts, stops and restarts, each list sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Running in the new configuration only (new or newly enabled): start them.
    pub added: Vec<AgentName>,
    /// Running in the old configuration only (gone or disabled): stop them.
    pub removed: Vec<AgentName>,
    /// Running in both with different settings (`origin` aside): restart them.
    pub changed: Vec<AgentName>,
}

impl Changes {
    /// Whether the reload changes no agent.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// The agent changes from `old` to `new`, comparing the agents each would run
/// ([`WorkersConfig::enabled_agents`]).
pub fn diff(old: &WorkersConfig, new: &WorkersConfig) -> Changes {
    let running = |c: &'_ WorkersConfig| -> BTreeMap<AgentName, AgentConfig> {
        c.enabled_agents().map(|a| (a.name.clone(), a.clone())).collect()
    };
    let (old, new) = (running(old), running(new));
    let mut changes = Changes::default();
    for (name, agent) in &new {
        match old.get(name) {
            None => changes.added.push(name.clone()),
            Some(before) if !before.same_settings(agent) => changes.changed.push(name.clone()),
            Some(_) => {}
        }
    }
    changes.removed = old.keys().filter(|n| !new.contains_key(*n)).cloned().collect();
    changes
}

/// Whether the daemon's own `[workers]` settings differ.
pub fn settings_changed(old: &WorkersConfig, new: &WorkersConfig) -> bool {
    old.settings != new.settings
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::model::Policy;

    fn agent(name: &str) -> AgentConfig {
        AgentConfig {
            name: AgentName::parse(name).unwrap(),
            enabled: true,
            prompt_template: "{message}".into(),
            policy: Policy::Queue,
            max_concurrent: 4,
            cwd: PathBuf::from("/w"),
            mode: "auto".into(),
            model: None,
            transport: None,
            composer: None,
            accept_from_non_members: false,
            origin: "w.toml:1".into(),
        }
    }

    fn config(agents: Vec<AgentConfig>) -> WorkersConfig {
        WorkersConfig {
            agents: agents.into_iter().map(|a| (a.name.clone(), a)).collect(),
            ..WorkersConfig::default()
        }
    }

    fn names(v: &[AgentName]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn added_removed_and_changed_agents_are_told_apart() {
        let old = config(vec![agent("a@t"), agent("b@t"), agent("c@t")]);
        let mut b = agent("b@t");
        b.model = Some("gpt-5".into());
        let mut c = agent("c@t");
        c.origin = "w.toml:9".into();
        let new = config(vec![b, c, agent("d@t")]);
        let got = diff(&old, &new);
        assert_eq!(names(&got.added), ["d@t"]);
        assert_eq!(names(&got.removed), ["a@t"]);
        assert_eq!(names(&got.changed), ["b@t"]);
        assert!(diff(&new, &new).is_empty());
    }

    #[test]
    fn disabling_removes_and_enabling_adds() {
        let mut off = agent("a@t");
        off.enabled = false;
        let on = config(vec![agent("a@t")]);
        let disabled = config(vec![off]);
        assert_eq!(names(&diff(&on, &disabled).removed), ["a@t"]);
        assert_eq!(names(&diff(&disabled, &on).added), ["a@t"]);
        let mut all_off = on.clone();
        all_off.settings.enabled = false;
        assert_eq!(names(&diff(&on, &all_off).removed), ["a@t"]);
        assert!(settings_changed(&on, &all_off));
        assert!(!settings_changed(&on, &disabled));
    }
}
