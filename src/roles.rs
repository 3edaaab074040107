//! `--role NAME`: a preset from `[roles.<name>]` in acplb's `config.toml` — `model`, `effort`,
//! `sandbox`, `approval_policy`, `developer_instructions` — for `acplb serve` and
//! `acplb mcp codex`. The model, effort and developer instructions become Codex `-c` overrides
//! after the command line's own (so plugins' instructions are still appended after them); the
//! sandbox and approval policy are the defaults of each `acplb mcp codex` thread.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use serde::Deserialize;

/// One `[roles.<name>]` table.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Role {
    pub(crate) model: Option<String>,
    pub(crate) effort: Option<String>,
    pub(crate) sandbox: Option<String>,
    pub(crate) approval_policy: Option<String>,
    pub(crate) developer_instructions: Option<String>,
}

impl Role {
    /// The Codex `-c` overrides this role adds.
    pub(crate) fn overrides(&self) -> Vec<String> {
        let quoted = |v: &str| toml::Value::String(v.to_owned()).to_string();
        [
            ("model", &self.model),
            ("model_reasoning_effort", &self.effort),
            ("developer_instructions", &self.developer_instructions),
        ]
        .into_iter()
        .filter_map(|(key, value)| value.as_deref().map(|v| format!("{key}={}", quoted(v))))
        .collect()
    }
}

/// The role `name` from the settings file's `roles` table (`None` without `--role`).
pub(crate) fn load(
    name: Option<&str>,
    roles: Option<&toml::Table>,
    file: &str,
) -> anyhow::Result<Option<Role>> {
    let Some(name) = name else { return Ok(None) };
    let roles: BTreeMap<String, Role> = match roles {
        Some(t) => t
            .clone()
            .try_into()
            .with_context(|| format!("{file}: a `[roles.<name>]` table"))?,
        None => BTreeMap::new(),
    };
    match roles.get(name) {
        Some(role) => {
            if let Some(s) = &role.sandbox
                && !["read-only", "workspace-write", "danger-full-access"].contains(&s.as_str())
            {
                bail!(
                    "{file}: `roles.{name}.sandbox` must be read-only, workspace-write or danger-full-access, not `{s}`"
                );
            }
            if let Some(a) = &role.approval_policy
                && !["untrusted", "on-failure", "on-request", "never"].contains(&a.as_str())
            {
                bail!(
                    "{file}: `roles.{name}.approval_policy` must be untrusted, on-failure, on-request or never, not `{a}`"
                );
            }
            Ok(Some(role.clone()))
        }
        None if roles.is_empty() => {
            bail!("--role {name}: {file} has no `[roles.{name}]` table (no roles at all)")
        }
        None => bail!(
            "--role {name}: {file} has no `[roles.{name}]`; its roles are {}",
            roles.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse::<toml::Table>().unwrap()["roles"]
            .as_table()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_role_becomes_quoted_overrides_and_mistakes_are_named() {
        let roles = table(
            "[roles.rev]\nmodel = \"m\"\neffort = \"high\"\ndeveloper_instructions = \"Say \\\"hi\\\"\"\n",
        );
        let role = load(Some("rev"), Some(&roles), "config.toml").unwrap().unwrap();
        assert_eq!(
            role.overrides(),
            [
                "model=\"m\"",
                "model_reasoning_effort=\"high\"",
                "developer_instructions='Say \"hi\"'"
            ]
        );
        assert_eq!(load(None, Some(&roles), "f").unwrap(), None);
        let e = load(Some("dev"), Some(&roles), "f").unwrap_err().to_string();
        assert!(e.contains("its roles are rev"), "{e}");
        let bad = table("[roles.x]\nsandbox = \"none\"\n");
        assert!(
            load(Some("x"), Some(&bad), "f")
                .unwrap_err()
                .to_string()
                .contains("sandbox")
        );
        let typo = table("[roles.x]\nmodle = \"m\"\n");
        assert!(format!("{:#}", load(Some("x"), Some(&typo), "f").unwrap_err()).contains("modle"));
    }
}
