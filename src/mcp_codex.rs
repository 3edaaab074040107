//! `acplb mcp codex`: Codex as MCP tools on stdio. The acplb server is built as `acplb serve`
//! builds it (the Codex provider, the composer's plugins, the state directory); acplb-mcp is
//! its in-process client and the MCP face (ADR 0023).

use std::rc::Rc;
use std::time::Duration;

use acplb_atm::ReadOptions;
use acplb_atm::mcp::{Backend, McpConfig};
use acplb_codex::CodexAdapter;
use acplb_core::permission::Mode;
use acplb_core::plugin::composer::ComposerConfig;
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::{Server, ServerOptions};
use acplb_mcp::McpCodexConfig;
use anyhow::Context as _;

use crate::cli::{Cli, CodexArgs};
use crate::{pipelines, serve, settings};

pub(crate) fn run(cli: &Cli, args: &CodexArgs) -> anyhow::Result<()> {
    let explicit = pipelines::explicit_source(cli.composer.as_deref());
    let checked_now = explicit.is_some();
    // `--identity` is the identity of every session's `atm-identity` too, not only a filter.
    let plugins = pipelines::load_as(explicit, args.identity.clone())?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    if checked_now {
        pipelines::dry_build(&plugins, &cwd)?;
    }
    let composer = plugins.config_for(&cwd)?;
    let role = settings::role(cli.role.as_deref())?;
    let options = serve::codex_options(cli, role.as_ref());
    let catalog = acplb_codex::catalog(&options.overrides);
    let transport = settings::transport(cli)?;
    let durability = serve::durability()?;
    let request_timeout = settings::request_timeout(args.request_timeout)?;
    let mail = composer
        .as_ref()
        .and_then(|c| mail_config(c, args))
        .map(|cfg| acplb_atm::mcp::mail_server(&cfg).map(|(server, _)| server))
        .transpose()
        .context("the team-mail tools")?;
    let identity = args
        .identity
        .clone()
        .or_else(|| mail.as_ref().map(|m| m.identity().to_owned()));
    let audit = args
        .audit
        .as_deref()
        .map(acplb_atm::audit::AuditLog::open)
        .transpose()
        .context("the audit log")?;
    let config = McpCodexConfig {
        cwd,
        request_timeout,
        state_dir: durability.as_ref().map(|d| d.state_dir.clone()),
        team: mail.as_ref().map(|m| m.team().to_owned()),
        identity,
        audit,
        mail,
        codex_program: Some(options.program.clone()),
        transport: transport.transport.to_string(),
        resume: args.resume.clone(),
        default_mode: role
            .as_ref()
            .and_then(|r| r.sandbox.as_deref())
            .and_then(sandbox_mode),
        never_ask: role.as_ref().and_then(|r| r.approval_policy.as_deref()) == Some("never"),
        role: cli.role.clone(),
    };
    serve::arm_exit_guard();
    let runtime = crate::serve::runtime()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let provider: Rc<dyn ProviderAdapter> =
            Rc::new(CodexAdapter::new(options, transport.transport, catalog));
        let server = Server::new(
            provider.clone(),
            std::sync::Arc::new(plugins),
            ServerOptions {
                agent_name: "acplb-mcp".into(),
                agent_version: env!("CARGO_PKG_VERSION").into(),
                shutdown_grace: Duration::from_millis(900),
                output_flow: acplb_core::transport::OutputFlow::default(),
                turn_timeout: cli.turn_timeout.limit(),
                durability,
            },
        );
        acplb_mcp::serve(
            server,
            provider,
            config,
            tokio::io::stdin(),
            tokio::io::stdout(),
            serve::stop_signal(),
        )
        .await
    })?;
    runtime.shutdown_timeout(Duration::from_millis(50));
    Ok(())
}

/// The session mode of a Codex sandbox name.
fn sandbox_mode(sandbox: &str) -> Option<Mode> {
    match sandbox {
        "read-only" => Some(Mode::ReadOnly),
        "workspace-write" => Some(Mode::Auto),
        "danger-full-access" => Some(Mode::FullAccess),
        _ => None,
    }
}

/// The team-mail tools' settings, when the composer has `atm-mail`: its backend, and the
/// identity and team `atm-identity` names (`--identity` first). The sessions' `atm-identity`
/// holds the identity's claim, so the tools do not claim it again.
fn mail_config(composer: &ComposerConfig, args: &CodexArgs) -> Option<McpConfig> {
    let param = |id: &str, key: &str| {
        composer
            .plugins
            .iter()
            .find(|p| p.id == id)
            .and_then(|p| p.params.str(key))
            .map(str::to_owned)
    };
    let mail = composer.plugins.iter().find(|p| p.id == "atm-mail")?;
    Some(McpConfig {
        identity: args
            .identity
            .clone()
            .or_else(|| param("atm-identity", "identity")),
        team: param("atm-identity", "team"),
        workspace: None,
        backend: match mail.params.str("backend") {
            Some("atm-cli") => Backend::AtmCli,
            _ => Backend::Files,
        },
        claude_root: param("atm-identity", "atm_home").map(|h| std::path::PathBuf::from(h).join(".claude")),
        audit: None,
        identity_already_claimed: true,
        read_limits: ReadOptions::default(),
    })
}
