//! `acplb serve`: the ACP server over stdio with the Codex provider.

use std::rc::Rc;
use std::time::Duration;

use acplb_codex::{CodexAdapter, CodexOptions, McpLauncher, default_catalog};
use acplb_core::runtime::{Server, ServerOptions};
use anyhow::Context as _;

use crate::cli::Cli;
use crate::codex_path;
use crate::pipelines;

/// `acplb mcp launch` of this very binary: how client MCP servers get their `env` values.
fn mcp_launcher() -> Option<McpLauncher> {
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

pub(crate) fn run(cli: &Cli) -> anyhow::Result<()> {
    // The composer file first: a bad one stops acplb before it serves anything.
    let explicit = pipelines::explicit_source(cli.composer.as_deref());
    let checked_now = explicit.is_some();
    let plugins = pipelines::load(explicit)?;
    if checked_now {
        let cwd = std::env::current_dir().context("reading the current directory")?;
        pipelines::dry_build(&plugins, &cwd)?;
    }
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
    options.overrides.clone_from(&cli.config);
    options.transcript_dir.clone_from(&cli.transcript_dir);
    options.mcp_launcher = mcp_launcher();
    let provider = Rc::new(CodexAdapter::new(options));
    let server = Server::new(
        provider,
        Rc::new(plugins),
        ServerOptions {
            agent_name: "acplb".into(),
            agent_version: env!("CARGO_PKG_VERSION").into(),
            catalog: default_catalog(),
            shutdown_grace: Duration::from_millis(900),
            turn_timeout: cli.turn_timeout.limit(),
        },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let sigterm = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for SIGTERM");
                    std::future::pending::<()>().await;
                }
            }
        };
        server.serve(agent_client_protocol::Stdio::new(), sigterm).await
    })?;
    // The Stdio transport reads stdin on a blocking thread that may still wait for input after
    // a SIGTERM; leaving without waiting for it is what lets acplb exit at once.
    runtime.shutdown_timeout(Duration::from_millis(50));
    Ok(())
}
