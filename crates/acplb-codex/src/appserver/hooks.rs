//! Codex's hooks and their trust (ADR 0044): what `hooks/list` says of a directory's hooks, and
//! trusting the ones the user saw, by writing each one's `hooks.state."<key>".trusted_hash` into
//! Codex's user config (`config/batchWrite`, reloaded into loaded threads), then listing again to
//! check. Codex runs no hook that is not trusted (or managed); a hook whose file changed since it
//! was trusted is `modified` and needs trust again.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::protocol::requests::Request;
use super::rpc::Rpc;

/// `hooks/list` for one directory.
#[derive(Debug, Serialize)]
struct HooksList {
    cwds: Vec<String>,
}

impl Request for HooksList {
    const METHOD: &'static str = "hooks/list";
}

/// `config/batchWrite` of trusted hashes, reloaded into loaded threads.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigBatchWrite {
    edits: Vec<Value>,
    reload_user_config: bool,
}

impl Request for ConfigBatchWrite {
    const METHOD: &'static str = "config/batchWrite";
}

/// One hook, as much of it as the user needs to decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hook {
    pub(crate) key: String,
    /// `sessionStart`, `preToolUse`, …
    pub(crate) event: String,
    /// The command it runs, else its kind (`mcpTool server/tool`, `prompt`, `agent`).
    pub(crate) action: String,
    /// `user`, `project`, `plugin`, …
    pub(crate) source: String,
    pub(crate) source_path: String,
    pub(crate) hash: String,
    /// `trusted`, `untrusted`, `modified` or `managed`.
    pub(crate) trust: String,
    pub(crate) enabled: bool,
}

impl Hook {
    /// Whether Codex waits for the user's trust before running it.
    pub(crate) fn needs_trust(&self) -> bool {
        matches!(self.trust.as_str(), "untrusted" | "modified")
    }
}

/// The hooks of `cwd`, and Codex's warnings and errors about its hook files.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    pub(crate) hooks: Vec<Hook>,
    pub(crate) problems: Vec<String>,
}

/// `hooks/list` for `cwd`.
pub(crate) async fn list(rpc: &Rpc, cwd: &Path) -> Result<Listed, String> {
    parse(&ask(rpc, cwd).await?)
}

/// Codex's own entry for `cwd` (its `hooks`, `warnings` and `errors`), as `hooks/list` gives it.
pub(crate) async fn entry(rpc: &Rpc, cwd: &Path) -> Result<Value, String> {
    let answer = ask(rpc, cwd).await?;
    answer
        .get("data")
        .and_then(Value::as_array)
        .and_then(|entries| entries.first())
        .cloned()
        .ok_or_else(|| "Codex listed no hooks entry for that directory".to_owned())
}

async fn ask(rpc: &Rpc, cwd: &Path) -> Result<Value, String> {
    rpc.request(&HooksList {
        cwds: vec![cwd.to_string_lossy().into_owned()],
    })
    .await
    .map_err(|e| format!("Codex did not list its hooks: {e}"))
}

fn parse(answer: &Value) -> Result<Listed, String> {
    let entries = answer
        .get("data")
        .and_then(Value::as_array)
        .ok_or("Codex answered `hooks/list` without a list")?;
    let mut listed = Listed::default();
    for entry in entries {
        for key in ["warnings", "errors"] {
            let said = entry.get(key).and_then(Value::as_array).into_iter().flatten();
            listed.problems.extend(said.map(|p| {
                match p {
                    Value::String(s) => s.clone(),
                    other => other
                        .get("message")
                        .and_then(Value::as_str)
                        .map_or_else(|| other.to_string(), str::to_owned),
                }
            }));
        }
        let hooks = entry.get("hooks").and_then(Value::as_array).into_iter().flatten();
        listed.hooks.extend(hooks.filter_map(hook));
    }
    Ok(listed)
}

fn hook(v: &Value) -> Option<Hook> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let action = match v.get("handlerType").and_then(Value::as_str) {
        Some("command") => text("command"),
        Some("mcpTool") => format!("MCP tool {}/{}", text("server"), text("tool")),
        Some(other) => format!("a {other} hook"),
        None => "a hook".to_owned(),
    };
    Some(Hook {
        key: v.get("key").and_then(Value::as_str)?.to_owned(),
        event: text("eventName"),
        action,
        source: text("source"),
        source_path: text("sourcePath"),
        hash: v.get("currentHash").and_then(Value::as_str)?.to_owned(),
        trust: text("trustStatus"),
        enabled: v.get("enabled").and_then(Value::as_bool).unwrap_or(true),
    })
}

/// Trusts `wanted` (hooks as the user saw them: key and hash): each is trusted only if Codex still lists it
/// with the same hash. The hooks trusted now, or why none could be.
pub(crate) async fn trust(rpc: &Rpc, cwd: &Path, wanted: &[(String, String)]) -> Result<Vec<Hook>, String> {
    let now = list(rpc, cwd).await?.hooks;
    let mut changed = Vec::new();
    let mut edits = Vec::new();
    let mut trusting = Vec::new();
    for (key, hash) in wanted {
        match now.iter().find(|h| h.key == *key) {
            Some(h) if h.hash == *hash => {
                if h.needs_trust() {
                    edits.push(json!({
                        "keyPath": format!("hooks.state.{}.trusted_hash", json!(h.key)),
                        "value": h.hash,
                        "mergeStrategy": "replace",
                    }));
                    trusting.push(h.clone());
                }
            }
            _ => changed.push(key.clone()),
        }
    }
    if !changed.is_empty() {
        return Err(format!(
            "these hooks changed or went away since they were listed, so none was trusted: {}. List them again with `/hooks` and check what they run",
            changed.join(", ")
        ));
    }
    if edits.is_empty() {
        return Ok(Vec::new());
    }
    rpc.request(&ConfigBatchWrite {
        edits,
        reload_user_config: true,
    })
    .await
    .map_err(|e| format!("Codex did not record the trust: {e}"))?;
    let after = list(rpc, cwd).await?.hooks;
    let still: Vec<_> = trusting
        .iter()
        .filter(|t| !after.iter().any(|h| h.key == t.key && h.trust == "trusted"))
        .map(|t| t.key.clone())
        .collect();
    if still.is_empty() {
        Ok(trusting)
    } else {
        Err(format!("Codex still does not trust: {}", still.join(", ")))
    }
}

/// Markdown for the editor: every hook with what it runs, where it comes from and its trust.
pub(crate) fn render(cwd: &Path, listed: &Listed) -> String {
    let mut out = format!("**Codex hooks** for `{}`\n\n", cwd.display());
    if listed.hooks.is_empty() {
        out.push_str("No hooks are configured for this directory.\n");
    }
    for h in &listed.hooks {
        let trust = match h.trust.as_str() {
            "trusted" => "trusted",
            "managed" => "managed by an administrator",
            "untrusted" => "**not trusted**: Codex does not run it",
            "modified" => "**changed since it was trusted**: Codex does not run it",
            other => other,
        };
        let off = if h.enabled { "" } else { " (disabled)" };
        let _ = writeln!(
            out,
            "- `{}` runs `{}`{off}: {trust}; from the {} config `{}`",
            h.event, h.action, h.source, h.source_path
        );
    }
    for p in &listed.problems {
        let _ = writeln!(out, "- Codex says: {p}");
    }
    let waiting = listed.hooks.iter().filter(|h| h.needs_trust()).count();
    if waiting > 0 {
        let _ = write!(
            out,
            "\n{waiting} hook{} wait{} for your trust. Check what {} run{}, then send `/hooks trust` to trust exactly what is listed here.\n",
            if waiting == 1 { "" } else { "s" },
            if waiting == 1 { "s" } else { "" },
            if waiting == 1 { "it" } else { "they" },
            if waiting == 1 { "s" } else { "" },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Value {
        json!({"data": [{"cwd": "/w", "warnings": ["bad matcher"], "errors": [{"message": "hooks.json: expected array"}], "hooks": [
            {"key": "/h/config.toml:session_start:0:0", "eventName": "sessionStart", "handlerType": "command",
             "command": "echo started", "source": "user", "sourcePath": "/h/config.toml", "enabled": true,
             "currentHash": "sha256:aa", "trustStatus": "untrusted"},
            {"key": "/h/config.toml:stop:0:0", "eventName": "stop", "handlerType": "mcpTool", "server": "s", "tool": "t",
             "source": "project", "sourcePath": "/w/.codex/config.toml", "enabled": false,
             "currentHash": "sha256:bb", "trustStatus": "trusted"},
            {"eventName": "stop", "currentHash": "sha256:cc"}
        ]}]})
    }

    #[test]
    fn a_listing_shows_what_each_hook_runs_and_what_waits_for_trust() {
        let l = parse(&listed()).unwrap();
        assert_eq!(l.hooks.len(), 2, "a hook without a key is left out");
        assert!(l.hooks[0].needs_trust() && !l.hooks[1].needs_trust());
        assert_eq!(l.hooks[1].action, "MCP tool s/t");
        assert_eq!(l.problems, ["bad matcher", "hooks.json: expected array"]);
        let text = render(Path::new("/w"), &l);
        assert!(
            text.contains("`sessionStart` runs `echo started`: **not trusted**"),
            "{text}"
        );
        assert!(text.contains("(disabled): trusted"), "{text}");
        assert!(text.contains("Codex says: bad matcher"), "{text}");
        assert!(text.contains("1 hook waits for your trust"), "{text}");
        assert!(parse(&json!({})).is_err());
    }
}
