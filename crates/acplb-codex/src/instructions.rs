//! Merging plugin developer instructions with the user's own, so acplb appends to Codex's
//! developer instructions and never replaces them.

use std::path::{Path, PathBuf};

/// Where Codex keeps its config: `$CODEX_HOME`, else `~/.codex`.
pub(crate) fn codex_home(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    env("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".codex")))
}

/// The user's own `developer_instructions`: from a `-c` override if given, else from
/// `config.toml` in `home`.
pub(crate) fn users_own(overrides: &[String], home: Option<&Path>) -> Option<String> {
    for o in overrides.iter().rev() {
        if let Some(value) = o.strip_prefix("developer_instructions=") {
            // Codex parses the value as TOML and falls back to the raw text.
            let parsed = format!("v = {value}").parse::<toml::Table>().ok();
            return parsed
                .and_then(|t| t.get("v").and_then(|v| v.as_str().map(str::to_owned)))
                .or(Some(value.to_owned()));
        }
    }
    let text = std::fs::read_to_string(home?.join("config.toml")).ok()?;
    let table = text.parse::<toml::Table>().ok()?;
    table.get("developer_instructions")?.as_str().map(str::to_owned)
}

/// The instructions to pass, or `None` when plugins add nothing (Codex then uses its own).
pub(crate) fn merged(users: Option<&str>, added: &[String]) -> Option<String> {
    if added.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = users.into_iter().filter(|u| !u.trim().is_empty()).collect();
    parts.extend(added.iter().map(String::as_str));
    Some(parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_instructions_come_first_and_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "developer_instructions = \"Use tabs.\"\n",
        )
        .unwrap();
        let users = users_own(&[], Some(dir.path()));
        assert_eq!(users.as_deref(), Some("Use tabs."));
        let m = merged(users.as_deref(), &["<session-context>x</session-context>".into()]).unwrap();
        assert_eq!(m, "Use tabs.\n\n<session-context>x</session-context>");
    }

    #[test]
    fn an_override_wins_over_the_file_and_nothing_added_means_none() {
        let got = users_own(&["developer_instructions=\"from flag\"".into()], None);
        assert_eq!(got.as_deref(), Some("from flag"));
        assert_eq!(
            users_own(&["developer_instructions=raw text".into()], None).as_deref(),
            Some("raw text")
        );
        assert_eq!(merged(Some("x"), &[]), None);
    }

    #[test]
    fn codex_home_defaults_to_dot_codex() {
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_owned());
        assert_eq!(codex_home(env), Some(PathBuf::from("/home/u/.codex")));
    }
}
