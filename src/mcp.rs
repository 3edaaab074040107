//! `acplb mcp atm`: the agent-team mail tools as an MCP server on stdio, which the `atm-mail`
//! plugin registers for Codex (and which an editor may configure itself).

use acplb_atm::ReadOptions;
use acplb_atm::mcp::{Backend, McpConfig, serve_stdio};
use anyhow::Context as _;

use crate::cli::{AtmArgs, MailBackendArg};

pub(crate) fn run_atm(args: &AtmArgs) -> anyhow::Result<()> {
    let config = McpConfig {
        identity: args.identity.clone(),
        team: args.team.clone(),
        workspace: None,
        backend: match args.backend {
            MailBackendArg::Files => Backend::Files,
            MailBackendArg::AtmCli => Backend::AtmCli,
        },
        claude_root: None,
        audit: args.audit.clone(),
        identity_already_claimed: args.no_claim,
        read_limits: ReadOptions {
            max_messages: args.max_messages as usize,
            max_message_length: args.max_message_length as usize,
            include_system: false,
        },
    };
    // One thread is plenty for one client; blocking mail I/O goes to tokio's blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    runtime
        .block_on(serve_stdio(config))
        .context("the atm MCP server failed")
}
