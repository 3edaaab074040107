//! `acplb serve`: the ACP server over stdio with the Codex provider.

use std::io::IsTerminal as _;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acplb_codex::{CodexAdapter, CodexOptions, McpLauncher};
use acplb_core::runtime::{Durability, Server, ServerOptions};
use acplb_core::sessions::registry::{Registry, RegistryWriter};
use acplb_core::transport::stdio::{Wire, WireLimits};
use anyhow::Context as _;

use crate::cli::Cli;
use crate::codex_path;
use crate::pipelines;

/// `acplb mcp launch` of this very binary: how client MCP servers get their `env` values.
pub(crate) fn mcp_launcher() -> Option<McpLauncher> {
    match std::env::current_exe() {
        Ok(program) => Some(McpLauncher {
            program,
            args: vec!["mcp".into(), "launch".into()],
        }),
        Err(e) => {
            tracing::warn!(error = %e, "cannot find the acplb executable; MCP servers with `env` will be refused");
            None
        }
    }
}

/// The Codex provider's options from the global flags (`--codex`, `-c` after the `--role`'s
/// overrides, `--transcript-dir`).
pub(crate) fn codex_options(cli: &Cli, role: Option<&crate::roles::Role>) -> CodexOptions {
    let (program, found) = codex_path::resolve(cli.codex.as_deref());
    if found {
        tracing::info!(codex = %program.display(), "using codex");
    } else {
        tracing::warn!(
            codex = %program.display(),
            "codex not found; prompts will fail until it is installed (npm i -g @openai/codex) or --codex is set"
        );
    }
    let mut options = CodexOptions::new(program);
    options.overrides = role.map(crate::roles::Role::overrides).unwrap_or_default();
    options.overrides.extend(cli.config.iter().cloned());
    options.transcript_dir.clone_from(&cli.transcript_dir);
    options.mcp_launcher = mcp_launcher();
    options
}

pub(crate) fn run(cli: &Cli) -> anyhow::Result<()> {
    if std::io::stdin().is_terminal() {
        // Someone typed `acplb` in a terminal: say what it waits for, not nothing.
        tracing::warn!(
            "acplb speaks the Agent Client Protocol (JSON-RPC lines) on stdin and stdout, for an editor to run it; waiting for a client. `acplb --help` explains, `acplb doctor` checks Codex, Ctrl-D ends"
        );
    }
    // The composer file first: a bad one stops acplb before it serves anything.
    let explicit = pipelines::explicit_source(cli.composer.as_deref());
    let checked_now = explicit.is_some();
    let plugins = pipelines::load(explicit)?;
    if checked_now {
        let cwd = std::env::current_dir().context("reading the current directory")?;
        pipelines::dry_build(&plugins, &cwd)?;
    }
    let role = crate::settings::role(cli.role.as_deref())?;
    let mut options = codex_options(cli, role.as_ref());
    let catalog = acplb_codex::catalog(&options.overrides);
    let transport = crate::settings::transport(cli)?;
    let durability = durability()?;
    tracing::info!(transport = %transport.transport, from = %transport.from, "codex transport");
    arm_exit_guard();
    let runtime = runtime()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let limits = WireLimits {
            bytes_in_flight: i64::from(cli.output_buffer) << 20,
            ..WireLimits::default()
        };
        let wire = Wire::stdio(limits).into_parts();
        options.output_flow = wire.flow.clone();
        let provider = Rc::new(CodexAdapter::new(options, transport.transport, catalog));
        let server = Server::new(
            provider,
            Arc::new(plugins),
            ServerOptions {
                agent_name: "acplb".into(),
                agent_version: env!("CARGO_PKG_VERSION").into(),
                shutdown_grace: Duration::from_millis(900),
                output_flow: wire.flow,
                turn_timeout: cli.turn_timeout.limit(),
                durability,
            },
        );
        let result = server.serve(wire.transport, stop_signal()).await;
        // The transport is gone; what it had handed to the writer still goes out.
        if tokio::time::timeout(Duration::from_millis(500), wire.writer)
            .await
            .is_err()
        {
            tracing::debug!("the client is not reading; leaving unwritten replies behind");
        }
        result
    })?;
    // Stdin is read on a blocking thread that may still wait for input after a signal; leaving
    // without waiting for it is what lets acplb exit at once.
    runtime.shutdown_timeout(Duration::from_millis(50));
    Ok(())
}

/// A current-thread runtime: every session's state lives on one thread (ADR 0002).
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting tokio")
}

/// Where sessions are kept: the state directory, or nowhere (with a warning) when there is none.
pub(crate) fn durability() -> anyhow::Result<Option<Durability>> {
    let journal_limit = crate::settings::journal_limit()?;
    let Some(state_dir) = acplb_core::sessions::state::state_dir_from_env() else {
        tracing::warn!("no state directory (set ACPLB_STATE_DIR or HOME): sessions will not be kept");
        return Ok(None);
    };
    tracing::info!(dir = %state_dir.display(), "sessions are kept here");
    let registry = match RegistryWriter::start(Registry::new(&state_dir)) {
        Ok(writer) => Some(writer),
        Err(e) => {
            tracing::warn!(error = %e, "no session registry: session/list will show nothing");
            None
        }
    };
    Ok(Some(Durability {
        state_dir,
        journal_limit,
        registry,
    }))
}

/// Arms the exit guard (`acplb exit-guard`): it starts with the first Codex process, or not at
/// all if acplb cannot find its own executable (then only the clean-up after a SIGKILL is lost).
pub(crate) fn arm_exit_guard() {
    match std::env::current_exe() {
        Ok(exe) => {
            let args = ["exit-guard", "--pid", &std::process::id().to_string()].map(str::to_owned);
            acplb_core::transport::arm_exit_guard(exe, args.to_vec());
        }
        Err(e) => tracing::warn!(error = %e, "no exit guard: cannot find acplb's own executable"),
    }
}

/// Resolves on SIGTERM, SIGINT or SIGHUP: each stops acplb the same way (every session's Codex
/// process tree is stopped, then acplb exits).
pub(crate) async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        ("SIGTERM", SignalKind::terminate()),
        ("SIGINT", SignalKind::interrupt()),
        ("SIGHUP", SignalKind::hangup()),
    ];
    let mut waits = Vec::new();
    for (name, kind) in kinds {
        match signal(kind) {
            Ok(mut s) => waits.push(Box::pin(async move {
                s.recv().await;
                name
            })),
            Err(e) => tracing::warn!(error = %e, "cannot listen for {name}"),
        }
    }
    if waits.is_empty() {
        std::future::pending::<()>().await;
    }
    let (name, _, _) = futures::future::select_all(waits).await;
    tracing::info!("{name} received; stopping");
}
