//! `audit`: an append-only JSONL record of every prompt forwarded to Codex and, through the
//! `atm` MCP server, of every ATM tool call, with secrets redacted.
//!
//! Tool calls run in the MCP server process (Codex's child), so they are written there: this
//! plugin hands its log path to the server `atm-mail` registers (`--audit PATH`), whichever of
//! the two comes first. Prompts are written here, in the prompt hook.

use std::cell::OnceCell;
use std::path::PathBuf;
use std::sync::Arc;

use acplb_core::plugin::registry::{
    BuildContext, Built, ParamKind, ParamSpec, PluginFactory, PluginParams, Resolved,
};
use acplb_core::plugin::{Plugin, PromptContext, SessionStart};
use acplb_core::provider::TurnRequest;
use agent_client_protocol::v1::schema::McpServer;

use super::{ATM_IDENTITY, ATM_MAIL, AUDIT, origin_of, vars};
use crate::audit::AuditLog;
use crate::env::EnvSource;
use crate::identity::resolve;

const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "path",
    kind: ParamKind::FilePath,
    doc: "the JSONL file (relative paths are relative to the session's workspace, and a workspace's own composer.toml may only name files inside it; default `<ATM_HOME|HOME>/.config/atm/agent-sessions/<team>/audit.jsonl`, the file atm-agent-mcp writes)",
}];

/// Builds [`Audit`] plugins.
pub struct AuditFactory {
    env: Arc<dyn EnvSource>,
}

impl std::fmt::Debug for AuditFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditFactory")
    }
}

impl AuditFactory {
    /// A factory resolving against `env`.
    pub fn new(env: Arc<dyn EnvSource>) -> Self {
        Self { env }
    }

    /// The team whose default log is used: `atm-identity`'s when it came first, else resolved
    /// the same way it would (`ATM_TEAM`, `.atm.toml`, `default`).
    fn team(&self, ctx: &BuildContext) -> Result<(String, String), String> {
        if let Some(r) = ctx.earlier_value(ATM_IDENTITY, "team") {
            return Ok((r.value.clone(), format!("{ATM_IDENTITY} ({})", r.origin)));
        }
        let r = resolve(None, None, self.env.as_ref(), &ctx.cwd).map_err(|e| e.to_string())?;
        let origin = origin_of(&r.team_source, None, vars::TEAM);
        Ok((r.team, origin))
    }
}

impl PluginFactory for AuditFactory {
    fn id(&self) -> &'static str {
        AUDIT
    }

    fn description(&self) -> &'static str {
        "appends every prompt and every ATM tool call to a JSONL audit log, secrets redacted"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn build(&self, params: &PluginParams, ctx: &BuildContext) -> Result<Built, String> {
        let mut report = Vec::new();
        // A `path` value arrives resolved and checked (`acplb_core::plugin::paths`).
        let (path, origin) = if let Some(p) = params.str("path") {
            (
                ctx.cwd.join(p),
                params.origin("path").unwrap_or("composer.toml").to_owned(),
            )
        } else {
            let (team, team_origin) = self.team(ctx)?;
            let (home, home_origin) = super::atm_home(ctx, self.env.as_ref())
                .ok_or("cannot place the default audit log: set `path`, `ATM_HOME` or `HOME`")?;
            let path = home
                .join(".config/atm/agent-sessions")
                .join(&team)
                .join("audit.jsonl");
            report.push(Resolved {
                key: "team".into(),
                value: team,
                origin: team_origin,
            });
            let origin = format!("default under the team's agent-sessions; home from {home_origin}");
            (path, origin)
        };
        report.insert(
            0,
            Resolved {
                key: "path".into(),
                value: path.display().to_string(),
                origin,
            },
        );
        // `atm-mail` came first: its server is patched at session start. Otherwise `atm-mail`
        // sees this plugin's path when it is built and passes it itself.
        let mail_server = ctx
            .earlier_value(ATM_MAIL, "server_name")
            .map(|r| r.value.clone());
        Ok(Built {
            plugin: Box::new(Audit {
                path,
                mail_server,
                log: OnceCell::new(),
            }),
            resolved: report,
        })
    }
}

/// The audit log of one session.
#[derive(Debug)]
pub struct Audit {
    path: PathBuf,
    mail_server: Option<String>,
    log: OnceCell<AuditLog>,
}

impl Plugin for Audit {
    fn session_start(&self, start: &mut SessionStart) -> Result<(), String> {
        let log = AuditLog::open(&self.path).map_err(|e| e.to_string())?;
        let _first = self.log.set(log).is_ok();
        if let Some(name) = &self.mail_server {
            pass_audit_path(&mut start.mcp_servers, name, &self.path);
        }
        Ok(())
    }

    fn prompt(&self, ctx: &PromptContext, turn: &mut TurnRequest) -> Result<(), String> {
        let Some(log) = self.log.get() else {
            return Ok(());
        };
        log.prompt(
            &ctx.session_id.to_string(),
            ctx.thread_id.as_deref(),
            &turn.prompt.text,
        )
        .map_err(|e| e.to_string())
    }
}

/// Adds `--audit PATH` to the stdio server `name` (the one `atm-mail` registered), once.
fn pass_audit_path(servers: &mut [McpServer], name: &str, path: &std::path::Path) {
    for server in servers {
        if let McpServer::Stdio(s) = server
            && s.name == name
            && !s.args.iter().any(|a| a == "--audit")
        {
            s.args.push("--audit".into());
            s.args.push(path.display().to_string());
        }
    }
}
