//! The `atm` MCP server (`acplb mcp atm --identity NAME --team TEAM`): resolve and claim the
//! identity, pick the mail backend, and serve the ATM tools over stdio with rmcp.

mod commit;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};

pub use tools::{AtmServer, BroadcastArgs, NoArgs, ReadArgs, SendArgs};

use crate::atm_cli::AtmCli;
use crate::audit::AuditLog;
use crate::env::{EnvSource, ProcessEnv};
use crate::error::MailError;
use crate::identity::{IdentityClaim, IdentityError, resolve};
use crate::mail::{MailBackend, ReadOptions};
use crate::store::MailStore;
use commit::CommitAfterWrite;

/// Where the mail lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Backend {
    /// Claude Code's team inbox files (interoperates with Claude, ATM ≤ 1.1, atm-agent-mcp).
    #[default]
    Files,
    /// The `atm` CLI, for ATM ≥ 1.2 whose mail lives in its daemon.
    AtmCli,
}

/// How to run the server.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// `--identity`; else `ATM_IDENTITY`, `.atm.toml`, `codex`.
    pub identity: Option<String>,
    /// `--team`; else `ATM_TEAM`, `.atm.toml`, `default`.
    pub team: Option<String>,
    /// Where `.atm.toml` is looked for (walking up); the current directory when `None`.
    pub workspace: Option<PathBuf>,
    /// The mail backend.
    pub backend: Backend,
    /// The Claude root holding `teams/`; `$ATM_HOME/.claude` or `$HOME/.claude` when `None`.
    pub claude_root: Option<PathBuf>,
    /// Append every tool call to this audit log (`audit.jsonl`); no audit when `None`.
    pub audit: Option<PathBuf>,
    /// The identity is already claimed by the process that registered this server (the
    /// `atm-identity` plugin of an acplb session), so the server must not claim it again: a
    /// second claim would find that live holder and send as `<identity>-2`.
    pub identity_already_claimed: bool,
    /// The most `atm_read` returns per call, and the length each message is cut to; the tool's
    /// own arguments may ask for less, never more.
    pub read_limits: ReadOptions,
}

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// Resolving or claiming the identity failed.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// The mail backend could not be set up.
    #[error(transparent)]
    Mail(#[from] MailError),
    /// The MCP session failed (initialisation or the service loop).
    #[error("mcp server failed: {0}")]
    Serve(String),
}

/// Serves the ATM tools on stdin/stdout until the client disconnects.
///
/// The identity is claimed for the whole session (a live holder of the name means a suffixed
/// name, logged); the claim is released when this returns.
pub async fn serve_stdio(cfg: McpConfig) -> Result<(), McpError> {
    let (server, claim) = mail_server(&cfg)?;
    let result = serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await;
    drop(claim);
    result
}

/// The ATM tools for `cfg`'s identity, resolved (and claimed, unless already claimed) as
/// [`serve_stdio`] does, for a server that serves them beside others (`acplb mcp codex`): the
/// server, and the claim to hold while it serves. Blocks (files, the claim's lock).
pub fn mail_server(cfg: &McpConfig) -> Result<(AtmServer, Option<IdentityClaim>), McpError> {
    let env = ProcessEnv;
    let workspace = match cfg.workspace.clone() {
        Some(ws) => ws,
        None => std::env::current_dir().map_err(|e| MailError::io("read current directory", ".", e))?,
    };
    let resolved = resolve(cfg.identity.as_deref(), cfg.team.as_deref(), &env, &workspace)?;
    let claim = if cfg.identity_already_claimed {
        None
    } else {
        let sessions = crate::env::agent_sessions_dir(&env, &resolved.team).ok_or(IdentityError::NoHome)?;
        let agent_id = format!("acplb:{}", uuid::Uuid::new_v4());
        Some(IdentityClaim::acquire(&sessions, &resolved.identity, &agent_id)?)
    };
    let identity = claim
        .as_ref()
        .map_or(resolved.identity.as_str(), IdentityClaim::name);
    tracing::info!(identity, team = %resolved.team, backend = ?cfg.backend, claimed_here = claim.is_some(), "atm mcp server starting");
    let backend = backend(cfg, &env, identity, &resolved.team)?;
    let audit = cfg.audit.as_deref().and_then(open_audit);
    let server = AtmServer::new(backend, identity, &resolved.team, audit).with_read_limits(cfg.read_limits);
    Ok((server, claim))
}

/// `transport` with the read receipts of `server`'s `atm_read` committed only once the
/// response carrying the mail is written, for a server that serves the ATM tools beside others
/// (`acplb mcp codex`).
pub fn commit_after_write<T: rmcp::transport::Transport<rmcp::RoleServer>>(
    transport: T,
    server: &AtmServer,
) -> impl rmcp::transport::Transport<rmcp::RoleServer, Error = T::Error> + use<T> {
    CommitAfterWrite::new(transport, server.pending.clone(), server.backend())
}

/// Serves `server` over any byte pipe (stdio in production, a duplex in tests).
pub async fn serve_io<R, W>(server: AtmServer, read: R, write: W) -> Result<(), McpError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let transport = CommitAfterWrite::new(
        AsyncRwTransport::new_server(read, write),
        server.pending.clone(),
        server.backend(),
    );
    let running = server
        .serve(transport)
        .await
        .map_err(|e| McpError::Serve(e.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|e| McpError::Serve(e.to_string()))?;
    tracing::info!(?reason, "atm mcp server stopped");
    Ok(())
}

fn backend(
    cfg: &McpConfig,
    env: &dyn EnvSource,
    identity: &str,
    team: &str,
) -> Result<Arc<dyn MailBackend>, McpError> {
    Ok(match cfg.backend {
        Backend::Files => {
            let store = match &cfg.claude_root {
                Some(root) => MailStore::new(root, identity, team)?,
                None => MailStore::from_env(env, identity, team)?,
            };
            Arc::new(store)
        }
        Backend::AtmCli => Arc::new(AtmCli::new(identity, team)),
    })
}

fn open_audit(path: &std::path::Path) -> Option<AuditLog> {
    AuditLog::open(path)
        .inspect_err(|error| tracing::warn!(%error, "audit log unavailable; continuing without it"))
        .ok()
}
