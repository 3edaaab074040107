//! `acplb mcp codex`: Codex as an MCP tool (a drop-in for the `codex mcp-server` Codex 0.154
//! removed). This process is the in-process ACP client of its own acplb [`Server`], like the
//! worker daemon (ADR 0014, 0023): each `codex` call is an ordinary acplb session — journaled,
//! listed by `acplb sessions`, loadable in an editor, with the composer's plugins — and the MCP
//! side only turns tool calls into ACP requests and ACP updates into MCP messages.
//!
//! The crate knows no provider: the binary builds the server with the Codex provider.

mod args;
mod config;
mod form;
mod hub;
mod open;
mod resume;
mod server;
mod threads;
mod tools;
mod turn;

use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use acplb_core::client::Answers;
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::Server;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, InitializeRequest, RequestPermissionRequest,
    RequestPermissionResponse, SessionNotification,
};
use agent_client_protocol::{Client, on_receive_notification, on_receive_request};
use rmcp::ServiceExt as _;
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, AsyncWrite};

pub use config::{DEFAULT_REQUEST_TIMEOUT, McpCodexConfig};

use config::Shared;
use hub::Hub;
use server::CodexMcp;

/// How long the acplb server may take to stop once the MCP client is gone.
const STOP_LIMIT: Duration = Duration::from_secs(15);

/// Why the server stopped abnormally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpCodexError {
    /// The in-process ACP connection failed.
    #[error("the acplb connection failed: {0}")]
    Acp(String),
    /// `--resume` names no thread this identity has.
    #[error("{0}")]
    Resume(String),
    /// The MCP session failed (initialisation or the service loop).
    #[error("the MCP server failed: {0}")]
    Mcp(String),
}

/// A task answering `codex_status`'s health questions from `provider`, and where to ask them.
fn answer_health(
    provider: Rc<dyn ProviderAdapter>,
) -> (
    tokio::sync::mpsc::UnboundedSender<config::HealthAsk>,
    tokio::task::JoinHandle<()>,
) {
    let (health_tx, mut health_rx) = tokio::sync::mpsc::unbounded_channel::<config::HealthAsk>();
    let health = tokio::task::spawn_local(async move {
        while let Some(ask) = health_rx.recv().await {
            let _answered = ask.send(provider.health().await);
        }
    });
    (health_tx, health)
}

/// Serves the Codex tools on `read`/`write` (stdio) until the client hangs up or `stop`
/// resolves; then the acplb server stops its sessions (their summaries, when plugins want them)
/// and Codex. Must run inside a `tokio::task::LocalSet`.
pub async fn serve<R, W>(
    server: Server,
    provider: Rc<dyn ProviderAdapter>,
    config: McpCodexConfig,
    read: R,
    write: W,
    stop: impl Future<Output = ()>,
) -> Result<(), McpCodexError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (agent_end, client_end) = acplb_core::client::duplex();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::task::spawn_local(server.serve(agent_end, async move {
        let _stopped = stop_rx.await;
    }));
    let (health_tx, health) = answer_health(provider);
    let hub = Hub::default();
    let answers = Answers::default();
    let (heard_hub, heard_answers) = (hub.clone(), answers.clone());
    let (asked_hub, form_hub) = (hub.clone(), hub.clone());
    let mail = config.mail;
    let mail_backend = mail.as_ref().map(acplb_atm::mcp::AtmServer::backend);
    let shared = Arc::new(Shared {
        cwd: config.cwd,
        request_timeout: config.request_timeout,
        state_dir: config.state_dir,
        identity: config.identity,
        team: config.team,
        audit: config.audit.map(Arc::new),
        codex_program: config.codex_program,
        transport: config.transport,
        default_mode: config.default_mode,
        never_ask: config.never_ask,
        role: config.role,
        mail_backend,
        health: health_tx,
    });
    let resumed = match resume::find(&shared, config.resume.as_deref()).await {
        Ok(r) => r,
        Err(e) => {
            let _sent = stop_tx.send(());
            let _stopped = tokio::time::timeout(STOP_LIMIT, serving).await;
            health.abort();
            return Err(McpCodexError::Resume(e));
        }
    };
    let result = Client
        .v1()
        .name("acplb-mcp")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                heard_answers.on_update(&n);
                heard_hub.update(n);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: Responder<RequestPermissionResponse>,
                        _cx| { asked_hub.permission(req, responder) },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CreateElicitationRequest,
                        responder: Responder<CreateElicitationResponse>,
                        _cx| { form_hub.form(req, responder) },
            on_receive_request!(),
        )
        .connect_with(client_end, async |cx| {
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(form::declared()),
            )
            .block_task()
            .await?;
            let handler = CodexMcp {
                cx,
                hub,
                answers,
                open: Arc::new(Mutex::new(open::OpenThreads::default())),
                shared,
                mail,
                resume: Arc::new(resume::Pending::new(resumed)),
                started: Instant::now(),
            };
            let transport = AsyncRwTransport::new_server(read, write);
            Ok(match handler.mail.clone() {
                Some(mail) => {
                    let transport = acplb_atm::mcp::commit_after_write(transport, &mail);
                    run(handler, transport, stop).await
                }
                None => run(handler, transport, stop).await,
            })
        })
        .await;
    let _sent = stop_tx.send(());
    match tokio::time::timeout(STOP_LIMIT, serving).await {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(e))) => tracing::warn!(error = %e, "the acplb server ended with an error"),
        Ok(Err(e)) => tracing::warn!(error = %e, "the acplb server's task failed"),
        Err(_) => tracing::warn!(limit = ?STOP_LIMIT, "the acplb server did not stop in time"),
    }
    health.abort();
    result.map_err(|e| McpCodexError::Acp(e.message))?
}

/// The MCP service on `transport` until the client hangs up or `stop` resolves.
async fn run<T>(handler: CodexMcp, transport: T, stop: impl Future<Output = ()>) -> Result<(), McpCodexError>
where
    T: Transport<RoleServer> + Send + 'static,
{
    let running = handler
        .serve(transport)
        .await
        .map_err(|e| McpCodexError::Mcp(e.to_string()))?;
    let token = running.cancellation_token();
    tokio::select! {
        reason = running.waiting() => {
            let reason = reason.map_err(|e| McpCodexError::Mcp(e.to_string()))?;
            tracing::info!(?reason, "the MCP client is gone");
        }
        () = stop => {
            tracing::info!("stopping");
            token.cancel();
        }
    }
    Ok(())
}
