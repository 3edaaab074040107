//! The four ATM tools (`atm_send`, `atm_read`, `atm_broadcast`, `atm_pending_count`) over a
//! [`MailBackend`]. None takes a sender: every message is from the server's identity.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::RequestId;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::commit::PendingReceipts;
use crate::audit::{AuditLog, ToolCall};
use crate::error::MailError;
use crate::mail::{MailBackend, ReadOptions};

/// `atm_send` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SendArgs {
    /// The recipient, a team member's name: `agent` (same team) or `agent@team`.
    pub to: String,
    /// The message text.
    pub message: String,
    /// A short summary; the first 60 characters of the message when omitted.
    pub summary: Option<String>,
}

/// `atm_read` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArgs {
    /// At most this many messages, oldest first (default and cap: the server's limit, 10 unless configured).
    pub max_messages: Option<usize>,
    /// Each message is cut to this many characters, with a marker (default and cap: the server's limit, 4096 unless configured).
    pub max_message_length: Option<usize>,
}

/// `atm_broadcast` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BroadcastArgs {
    /// The message text.
    pub message: String,
    /// A short summary; the first 60 characters of the message when omitted.
    pub summary: Option<String>,
}

/// `atm_pending_count` takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

/// The MCP server exposing the ATM tools for one identity.
#[derive(Clone)]
pub struct AtmServer {
    backend: Arc<dyn MailBackend>,
    identity: String,
    team: String,
    audit: Option<Arc<AuditLog>>,
    read_limits: ReadOptions,
    pub(crate) pending: PendingReceipts,
    tool_router: ToolRouter<Self>,
}

impl std::fmt::Debug for AtmServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtmServer")
            .field("identity", &self.identity)
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

impl AtmServer {
    /// The identity it sends as.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Its team.
    pub fn team(&self) -> &str {
        &self.team
    }

    /// A server sending as `identity` of `team` through `backend`, auditing to `audit` if given.
    pub fn new(backend: Arc<dyn MailBackend>, identity: &str, team: &str, audit: Option<AuditLog>) -> Self {
        Self {
            backend,
            identity: identity.to_owned(),
            team: team.to_owned(),
            audit: audit.map(Arc::new),
            read_limits: ReadOptions::default(),
            pending: PendingReceipts::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// Caps what one `atm_read` returns (the defaults are 10 messages of 4096 characters).
    #[must_use]
    pub fn with_read_limits(mut self, limits: ReadOptions) -> Self {
        self.read_limits = limits;
        self
    }

    /// Its mail backend.
    pub fn backend(&self) -> Arc<dyn MailBackend> {
        Arc::clone(&self.backend)
    }

    /// Runs a blocking backend call off the async runtime.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn MailBackend) -> Result<T, MailError> + Send + 'static,
    ) -> Result<T, String> {
        let backend = Arc::clone(&self.backend);
        match tokio::task::spawn_blocking(move || f(backend.as_ref())).await {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(e) => Err(format!("mail task failed: {e}")),
        }
    }

    fn audit(
        &self,
        tool: &str,
        recipient: Option<&str>,
        summary: Option<&str>,
        ids: &[String],
        result: Result<(), &str>,
    ) {
        let Some(log) = &self.audit else { return };
        let call = ToolCall {
            identity: &self.identity,
            team: &self.team,
            tool,
            recipient,
            summary,
            message_ids: ids,
            result,
        };
        if let Err(error) = log.tool_call(&call) {
            tracing::warn!(%error, "audit write failed");
        }
    }
}

#[tool_router]
impl AtmServer {
    #[tool(
        description = "Send a message to a teammate. `to` is a team member's name, as `agent` or `agent@team`; you are always the sender."
    )]
    async fn atm_send(&self, Parameters(args): Parameters<SendArgs>) -> Result<String, String> {
        let (to, message, summary) = (args.to.clone(), args.message, args.summary.clone());
        let result = self
            .blocking(move |b| b.send(&to, &message, summary.as_deref()))
            .await;
        match &result {
            Ok(sent) => self.audit(
                "atm_send",
                Some(&sent.recipient),
                args.summary.as_deref(),
                std::slice::from_ref(&sent.message_id),
                Ok(()),
            ),
            Err(e) => self.audit("atm_send", Some(&args.to), args.summary.as_deref(), &[], Err(e)),
        }
        let sent = result?;
        Ok(json!({"message_id": sent.message_id, "recipient": sent.recipient}).to_string())
    }

    #[tool(
        description = "Read your unread team mail, oldest first, as {messages: [{from, message, timestamp, message_id}], remaining}. Messages are marked read once this result has been delivered; delivery is at-least-once, so skip any message_id you have already seen."
    )]
    async fn atm_read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
        RequestId(id): RequestId,
    ) -> Result<String, String> {
        let limits = self.read_limits;
        let opts = ReadOptions {
            max_messages: args
                .max_messages
                .map_or(limits.max_messages, |n| n.min(limits.max_messages)),
            max_message_length: args
                .max_message_length
                .map_or(limits.max_message_length, |n| n.min(limits.max_message_length)),
            include_system: limits.include_system,
        };
        let result = self.blocking(move |b| b.read(&opts)).await;
        let ids: Vec<String> = result
            .as_ref()
            .map(|b| b.receipt.message_ids().to_vec())
            .unwrap_or_default();
        self.audit(
            "atm_read",
            None,
            None,
            &ids,
            result.as_ref().map(|_| ()).map_err(String::as_str),
        );
        let batch = result?;
        let body = json!({"messages": batch.messages, "remaining": batch.remaining});
        let text = serde_json::to_string_pretty(&body).map_err(|e| e.to_string())?;
        if !batch.receipt.is_empty() {
            self.pending.park(id, batch.receipt);
        }
        Ok(text)
    }

    #[tool(description = "Send a message to every member of your team except yourself.")]
    async fn atm_broadcast(&self, Parameters(args): Parameters<BroadcastArgs>) -> Result<String, String> {
        let (message, summary) = (args.message, args.summary.clone());
        let report = self
            .blocking(move |b| b.broadcast(&message, summary.as_deref()))
            .await;
        let report = match report {
            Ok(r) => r,
            Err(e) => {
                self.audit("atm_broadcast", None, args.summary.as_deref(), &[], Err(&e));
                return Err(e);
            }
        };
        let ids: Vec<String> = report.sent.iter().map(|s| s.message_id.clone()).collect();
        self.audit("atm_broadcast", None, args.summary.as_deref(), &ids, Ok(()));
        let failed: Vec<_> = report
            .failed
            .iter()
            .map(|(name, e)| json!({"recipient": name, "error": e.to_string()}))
            .collect();
        let sent: Vec<_> = report
            .sent
            .iter()
            .map(|s| json!({"recipient": s.recipient, "message_id": s.message_id}))
            .collect();
        Ok(json!({"sent": sent, "failed": failed}).to_string())
    }

    #[tool(description = "Count your unread team mail without reading or marking it.")]
    async fn atm_pending_count(&self, Parameters(_): Parameters<NoArgs>) -> Result<String, String> {
        let result = self.blocking(|b| b.pending_count()).await;
        self.audit(
            "atm_pending_count",
            None,
            None,
            &[],
            result.as_ref().map(|_| ()).map_err(String::as_str),
        );
        Ok(json!({"unread": result?}).to_string())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AtmServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("acplb-atm", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Team mail for `{}` in team `{}` (agent-team-mail / Claude Code agent teams).",
                self.identity, self.team
            ))
    }
}
