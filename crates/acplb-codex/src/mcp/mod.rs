//! Client MCP servers as Codex configuration: names, commands and URLs become `-c` entries; every
//! `env` value and header value goes through Codex's environment instead, because a command line
//! is readable by every local user (`/proc/<pid>/cmdline`) and lands in transcripts.
//!
//! Each value gets a generated variable, `ACPLB_MCP_<server>_<n>`, set in Codex's environment.
//! - HTTP headers: `env_http_headers.<Header> = "ACPLB_MCP_…"`; Codex reads the value itself.
//! - stdio `env`: Codex can forward a variable to a server only under its own name (`env_vars`),
//!   so the server is started through the [`McpLauncher`] (`acplb mcp launch`), which Codex
//!   forwards the generated variables to and which renames them before it `exec`s the server.
//!   Passing the client's names through Codex instead would let a client's `PATH`, `HOME` or
//!   `OPENAI_API_KEY` for one server change Codex itself, and two servers could not each have
//!   their own `API_KEY`.
//!
//! Codex hands its whole environment to the commands the model runs; each generated variable is
//! set to an empty value for them (`shell_environment_policy.set`), so the model cannot read a
//! server's secret with `env`.

pub(crate) mod url_credentials;

use std::path::PathBuf;

use agent_client_protocol::v1::schema::McpServer;

use acplb_core::toml_text::{basic as toml_str, key as toml_key};

/// Prefix of the variables that carry MCP secrets to Codex.
pub(crate) const HANDOFF_PREFIX: &str = "ACPLB_MCP_";

/// The program that starts a stdio MCP server with its environment renamed from the generated
/// variables: `<program> <args…> --env NAME=VAR … -- <command> <command args…>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpLauncher {
    /// The launcher binary (acplb itself).
    pub program: PathBuf,
    /// Arguments before `--env` (`["mcp", "launch"]`).
    pub args: Vec<String>,
}

/// The MCP part of one Codex run.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct McpConfig {
    /// `-c` entries (names only, never a value from `env` or `headers`).
    pub overrides: Vec<String>,
    /// Variables to set in Codex's environment: the values.
    pub env: Vec<(String, String)>,
}

/// The configuration registering `servers` with Codex.
pub(crate) fn config(servers: &[McpServer], launcher: Option<&McpLauncher>) -> Result<McpConfig, String> {
    let mut out = McpConfig::default();
    for (n, server) in servers.iter().enumerate() {
        let mut vars = Handoff {
            server: n + 1,
            next: 0,
            out: &mut out,
        };
        let (name, entries) = match server {
            McpServer::Stdio(s) => {
                let name = mcp_name(&s.name);
                let command = s.command.to_string_lossy().into_owned();
                let (program, args) = if s.env.is_empty() {
                    (command, s.args.clone())
                } else {
                    let Some(launcher) = launcher else {
                        return Err(format!(
                            "MCP server `{}` has environment variables, which acplb passes only \
                             through its launcher (`acplb mcp launch`), and none is configured",
                            s.name
                        ));
                    };
                    let mut args = launcher.args.clone();
                    for e in &s.env {
                        let var = vars.hand_off(&e.value);
                        args.push("--env".into());
                        args.push(format!("{}={var}", e.name));
                    }
                    args.push("--".into());
                    args.push(command);
                    args.extend(s.args.iter().cloned());
                    (launcher.program.to_string_lossy().into_owned(), args)
                };
                let quoted: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
                let mut entries = vec![
                    format!("mcp_servers.{name}.command={}", toml_str(&program)),
                    format!("mcp_servers.{name}.args=[{}]", quoted.join(",")),
                ];
                let forwarded = vars.names();
                if !forwarded.is_empty() {
                    entries.push(format!("mcp_servers.{name}.env_vars=[{}]", forwarded.join(",")));
                }
                (name, entries)
            }
            McpServer::Http(h) => {
                let name = mcp_name(&h.name);
                let (url, basic) =
                    url_credentials::split(&h.url).map_err(|e| format!("MCP server `{}`: {e}", h.name))?;
                let mut entries = vec![format!("mcp_servers.{name}.url={}", toml_str(&url))];
                let (mut by_env, mut literal) = (Vec::new(), Vec::new());
                let has_authorization = h
                    .headers
                    .iter()
                    .any(|x| x.name.eq_ignore_ascii_case("authorization"));
                if let Some(value) = basic.filter(|_| !has_authorization) {
                    let var = vars.hand_off(&value);
                    by_env.push(format!("Authorization={}", toml_str(&var)));
                }
                for header in &h.headers {
                    if header.value.is_empty() {
                        // Codex skips an env header whose value is empty; an empty value is no secret.
                        literal.push(format!("{}=\"\"", toml_key(&header.name)));
                    } else {
                        let var = vars.hand_off(&header.value);
                        by_env.push(format!("{}={}", toml_key(&header.name), toml_str(&var)));
                    }
                }
                if !by_env.is_empty() {
                    entries.push(format!(
                        "mcp_servers.{name}.env_http_headers={{{}}}",
                        by_env.join(",")
                    ));
                }
                if !literal.is_empty() {
                    entries.push(format!(
                        "mcp_servers.{name}.http_headers={{{}}}",
                        literal.join(",")
                    ));
                }
                (name, entries)
            }
            _ => continue,
        };
        out.overrides.extend(entries);
        // The editor's user configured these servers explicitly; in exec mode Codex cannot
        // ask, so without this every call would fail with "requires approval".
        out.overrides.push(format!(
            "mcp_servers.{name}.default_tools_approval_mode=\"approve\""
        ));
    }
    let hidden: Vec<String> = out.env.iter().map(|(var, _)| hidden_from_commands(var)).collect();
    out.overrides.extend(hidden);
    Ok(out)
}

/// The `-c` entry that sets handed-off variable `var` empty for the commands the model runs
/// (Codex hands them its own environment otherwise).
pub(crate) fn hidden_from_commands(var: &str) -> String {
    format!("shell_environment_policy.set.{var}=\"\"")
}

/// Generated variables of one server.
struct Handoff<'a> {
    server: usize,
    next: usize,
    out: &'a mut McpConfig,
}

impl Handoff<'_> {
    fn hand_off(&mut self, value: &str) -> String {
        let var = format!("{HANDOFF_PREFIX}{}_{}", self.server, self.next);
        self.next += 1;
        self.out.env.push((var.clone(), value.to_owned()));
        var
    }

    /// This server's variables as TOML strings.
    fn names(&self) -> Vec<String> {
        let prefix = format!("{HANDOFF_PREFIX}{}_", self.server);
        self.out
            .env
            .iter()
            .filter(|(var, _)| var.starts_with(&prefix))
            .map(|(var, _)| toml_str(var))
            .collect()
    }
}

/// A server name as a bare TOML key segment.
pub(crate) fn mcp_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "server".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{EnvVariable, HttpHeader, McpServerHttp, McpServerStdio};

    use super::*;

    fn launcher() -> McpLauncher {
        McpLauncher {
            program: "/opt/acplb".into(),
            args: vec!["mcp".into(), "launch".into()],
        }
    }

    #[test]
    fn stdio_servers_without_env_are_plain_config_entries() {
        let s = McpServer::Stdio(
            McpServerStdio::new("my tools", "/usr/bin/python3")
                .args(vec!["srv.py".into(), "--x=\"y\"".into()]),
        );
        let got = config(&[s], None).unwrap();
        assert_eq!(
            got.overrides,
            [
                "mcp_servers.my_tools.command=\"/usr/bin/python3\"",
                r#"mcp_servers.my_tools.args=["srv.py","--x=\"y\""]"#,
                "mcp_servers.my_tools.default_tools_approval_mode=\"approve\"",
            ]
        );
        assert!(got.env.is_empty());
    }

    #[test]
    fn stdio_env_values_go_to_the_environment_never_to_the_command_line() {
        let secret = "ghp-super-secret-value-123";
        let servers = [
            McpServer::Stdio(McpServerStdio::new("echo", "/bin/echo")),
            McpServer::Stdio(
                McpServerStdio::new("gh", "/usr/bin/gh-mcp")
                    .args(vec!["stdio".into()])
                    .env(vec![
                        EnvVariable::new("GITHUB_TOKEN", secret),
                        EnvVariable::new("DEBUG", "1"),
                    ]),
            ),
        ];
        let got = config(&servers, Some(&launcher())).unwrap();
        let argv = got.overrides.join(" ");
        assert!(!argv.contains(secret), "{argv}");
        assert!(!argv.contains("DEBUG=1"), "{argv}");
        assert_eq!(
            got.env,
            [
                ("ACPLB_MCP_2_0".to_owned(), secret.to_owned()),
                ("ACPLB_MCP_2_1".to_owned(), "1".to_owned()),
            ]
        );
        assert!(
            got.overrides
                .contains(&"mcp_servers.gh.command=\"/opt/acplb\"".to_owned())
        );
        assert!(got.overrides.contains(
            &r#"mcp_servers.gh.args=["mcp","launch","--env","GITHUB_TOKEN=ACPLB_MCP_2_0","--env","DEBUG=ACPLB_MCP_2_1","--","/usr/bin/gh-mcp","stdio"]"#
                .to_owned()
        ));
        assert!(
            got.overrides
                .contains(&r#"mcp_servers.gh.env_vars=["ACPLB_MCP_2_0","ACPLB_MCP_2_1"]"#.to_owned())
        );
        // The model's commands see the variables empty.
        assert!(
            got.overrides
                .contains(&"shell_environment_policy.set.ACPLB_MCP_2_0=\"\"".to_owned())
        );
    }

    #[test]
    fn stdio_env_without_a_launcher_is_refused_not_leaked() {
        let s = McpServer::Stdio(McpServerStdio::new("gh", "/x").env(vec![EnvVariable::new("T", "v")]));
        let err = config(&[s], None).unwrap_err();
        assert!(err.contains("`gh`") && err.contains("launcher"), "{err}");
    }

    #[test]
    fn http_headers_are_read_by_codex_from_the_environment() {
        let s = McpServer::Http(
            McpServerHttp::new("remote", "https://mcp.example/x").headers(vec![
                HttpHeader::new("Authorization", "Bearer abc.def.ghi"),
                HttpHeader::new("X-Empty", ""),
            ]),
        );
        let got = config(&[s], None).unwrap();
        let argv = got.overrides.join(" ");
        assert!(!argv.contains("abc.def.ghi"), "{argv}");
        assert!(
            got.overrides.contains(
                &r#"mcp_servers.remote.env_http_headers={Authorization="ACPLB_MCP_1_0"}"#.to_owned()
            )
        );
        assert!(
            got.overrides
                .contains(&r#"mcp_servers.remote.http_headers={X-Empty=""}"#.to_owned())
        );
        assert_eq!(
            got.env,
            [("ACPLB_MCP_1_0".to_owned(), "Bearer abc.def.ghi".to_owned())]
        );
    }
}
