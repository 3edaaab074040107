//! What one session asks of its Codex thread: the `config` map of `thread/start` and
//! `thread/resume` (the client's MCP servers, the environment plugins give the model's
//! commands) and the sandbox and approval policy of each turn.
//!
//! The app-server is shared by every session, so nothing of a session can go in its process
//! environment. MCP `env` and header values travel in the `config` map over the app-server's
//! stdin pipe, which no other user can read (never on a command line); Codex hands `env` to the
//! MCP server it starts and sends the headers itself. Transcripts redact them like exec's.

use std::path::PathBuf;

use acplb_core::permission::{Approval, Mode, Sandbox};
use acplb_core::provider::SessionSettings;
use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Map, Value, json};

use crate::mcp::{mcp_name, url_credentials};

/// The `config` map for the session's thread.
pub(crate) fn thread_config(
    servers: &[McpServer],
    env: &[(String, String)],
) -> Result<Map<String, Value>, String> {
    let mut config = Map::new();
    let mut names = std::collections::HashSet::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => {
                let env: Map<String, Value> = s
                    .env
                    .iter()
                    .map(|e| (e.name.clone(), Value::String(e.value.clone())))
                    .collect();
                let mut entry = json!({
                    "command": s.command.to_string_lossy(),
                    "args": s.args,
                });
                if !env.is_empty() {
                    entry["env"] = Value::Object(env);
                }
                (mcp_name(&s.name), entry)
            }
            McpServer::Http(h) => {
                let (url, basic) =
                    url_credentials::split(&h.url).map_err(|e| format!("MCP server `{}`: {e}", h.name))?;
                let mut headers: Map<String, Value> = h
                    .headers
                    .iter()
                    .map(|x| (x.name.clone(), Value::String(x.value.clone())))
                    .collect();
                let has_authorization = headers.keys().any(|k| k.eq_ignore_ascii_case("authorization"));
                if let Some(value) = basic.filter(|_| !has_authorization) {
                    headers.insert("Authorization".into(), Value::String(value));
                }
                let mut entry = json!({ "url": url });
                if !headers.is_empty() {
                    entry["http_headers"] = Value::Object(headers);
                }
                (mcp_name(&h.name), entry)
            }
            _ => continue,
        };
        if !names.insert(name.clone()) {
            return Err(format!("two MCP servers are both named `{name}`"));
        }
        config.insert(format!("mcp_servers.{name}"), entry);
    }
    for (key, value) in env {
        config.insert(
            format!("shell_environment_policy.set.{key}"),
            Value::String(value.clone()),
        );
    }
    Ok(config)
}

/// `approvalPolicy` for a mode.
pub(crate) fn approval_policy(mode: Mode) -> &'static str {
    match mode.approval() {
        Approval::OnRequest => "on-request",
        Approval::Never => "never",
    }
}

/// `sandbox` (a `SandboxMode`) for `thread/start` and `thread/resume`.
pub(crate) fn sandbox_mode(mode: Mode, settings: &SessionSettings) -> &'static str {
    match mode.sandbox(settings.network_access) {
        Sandbox::ReadOnly => "read-only",
        Sandbox::WorkspaceWrite { .. } => "workspace-write",
        Sandbox::None => "danger-full-access",
    }
}

/// `sandboxPolicy` (a `SandboxPolicy`) for `turn/start`: the mode may change between turns;
/// `writable` (the session's additional directories) are writable beside the cwd.
pub(crate) fn sandbox_policy(mode: Mode, settings: &SessionSettings, writable: &[PathBuf]) -> Value {
    match mode.sandbox(settings.network_access) {
        Sandbox::ReadOnly => json!({ "type": "readOnly", "networkAccess": false }),
        Sandbox::WorkspaceWrite { network } => json!({
            "type": "workspaceWrite",
            "writableRoots": writable,
            "networkAccess": network,
            "excludeTmpdirEnvVar": false,
            "excludeSlashTmp": false,
        }),
        Sandbox::None => json!({ "type": "dangerFullAccess" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{EnvVariable, HttpHeader, McpServerHttp, McpServerStdio};

    #[test]
    fn secrets_go_in_the_config_map_and_names_are_checked() {
        let servers = vec![
            McpServer::Stdio(
                McpServerStdio::new("files", "/bin/files").env(vec![EnvVariable::new("TOKEN", "s3cret")]),
            ),
            McpServer::Http(
                McpServerHttp::new("web", "https://u:pw@example.com/mcp")
                    .headers(vec![HttpHeader::new("X-Key", "k1")]),
            ),
        ];
        let config = thread_config(&servers, &[("ATM_IDENTITY".into(), "bob".into())]).unwrap();
        assert_eq!(config["mcp_servers.files"]["env"]["TOKEN"], "s3cret");
        assert_eq!(config["mcp_servers.files"]["command"], "/bin/files");
        assert_eq!(config["mcp_servers.web"]["url"], "https://example.com/mcp");
        assert_eq!(config["mcp_servers.web"]["http_headers"]["X-Key"], "k1");
        assert!(
            config["mcp_servers.web"]["http_headers"]["Authorization"]
                .as_str()
                .unwrap()
                .starts_with("Basic ")
        );
        assert_eq!(config["shell_environment_policy.set.ATM_IDENTITY"], "bob");
        let twice = vec![
            McpServer::Stdio(McpServerStdio::new("a", "/x")),
            McpServer::Stdio(McpServerStdio::new("a", "/y")),
        ];
        assert!(thread_config(&twice, &[]).unwrap_err().contains("both named `a`"));
    }

    #[test]
    fn modes_map_to_policies() {
        let s = SessionSettings::default();
        assert_eq!(approval_policy(Mode::ReadOnly), "on-request");
        assert_eq!(approval_policy(Mode::FullAccess), "never");
        assert_eq!(sandbox_mode(Mode::Auto, &s), "workspace-write");
        assert_eq!(sandbox_policy(Mode::ReadOnly, &s, &[])["type"], "readOnly");
        assert_eq!(
            sandbox_policy(Mode::FullAccess, &s, &[])["type"],
            "dangerFullAccess"
        );
    }
}
