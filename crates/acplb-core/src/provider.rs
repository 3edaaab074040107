//! The provider seam: what a coding-agent backend (Codex today) must implement for the runtime.
//!
//! `acplb-core` knows no provider. A [`ProviderAdapter`] opens one [`ProviderSession`] per ACP
//! session; the session actor calls [`ProviderSession::run_turn`] once per prompt, handing it a
//! [`SessionSink`] for `session/update` notifications and a cancellation token.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{McpServer, SessionUpdate, StopReason};
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::error::ProviderError;
use crate::permission::Mode;

/// Where a provider sends the updates of a running turn.
///
/// Implementations forward to the ACP client (through the plugin pipeline); tests collect them.
pub trait SessionSink {
    /// Sends one `session/update` for the session this sink belongs to.
    fn update(&self, update: SessionUpdate);

    /// Resolves when the client can take more updates. Providers await it before they read
    /// more of their child's output, so a client that stops reading pauses the child instead
    /// of filling acplb's memory.
    fn ready(&self) -> futures::future::LocalBoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// A sink that keeps every update, for tests and for `playback decode`.
#[derive(Debug, Default)]
pub struct CollectingSink {
    updates: std::cell::RefCell<Vec<SessionUpdate>>,
}

impl CollectingSink {
    /// Takes the updates collected so far.
    pub fn take(&self) -> Vec<SessionUpdate> {
        std::mem::take(&mut self.updates.borrow_mut())
    }
}

impl SessionSink for CollectingSink {
    fn update(&self, update: SessionUpdate) {
        self.updates.borrow_mut().push(update);
    }
}

/// What the editor chose for a session: model, reasoning effort, network access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSettings {
    /// Model slug, `None` for the provider's default.
    pub model: Option<String>,
    /// Reasoning effort (`low`, `medium`, `high`, `xhigh`), `None` for the default.
    pub reasoning_effort: Option<String>,
    /// Whether sandboxed commands may use the network (only meaningful in `auto` mode).
    pub network_access: bool,
}

/// An image attached to a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInput {
    /// MIME type as the client sent it (`image/png`, ...).
    pub mime_type: String,
    /// Decoded image bytes.
    pub bytes: Vec<u8>,
}

/// A prompt as the provider receives it: the ACP content blocks already flattened.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptInput {
    /// The text of the prompt, with resource links and embedded resources rendered into it.
    pub text: String,
    /// Images, in the order the client sent them.
    pub images: Vec<ImageInput>,
}

/// What every turn of a session shares, fixed when the session starts.
#[derive(Debug, Clone)]
pub struct SessionSetup {
    /// The ACP session id, for logs.
    pub session_id: String,
    /// Absolute working directory of the session.
    pub cwd: PathBuf,
    /// MCP servers the client asked for, plus those plugins added.
    pub mcp_servers: Vec<McpServer>,
    /// Extra environment for the provider process (from plugins).
    pub env: Vec<(String, String)>,
    /// Developer instructions for every turn (from plugins).
    pub developer_instructions: Vec<String>,
    /// Whether the client shows `notice` updates (`session.notices` capability).
    pub client_shows_notices: bool,
}

/// One turn: the prompt plus what may change between turns.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The prompt.
    pub prompt: PromptInput,
    /// Current permission mode.
    pub mode: Mode,
    /// Current settings.
    pub settings: SessionSettings,
    /// Developer instructions added by plugins for this turn (never replacing the user's own).
    pub developer_instructions: Vec<String>,
    /// Extra environment for this turn only (from plugins).
    pub env: Vec<(String, String)>,
}

/// Token counts of one turn (not cumulative).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnUsage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Cached input tokens.
    pub cached_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning output tokens.
    pub reasoning_output_tokens: u64,
}

/// How a turn ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnOutcome {
    /// The ACP stop reason.
    pub stop_reason: StopReason,
    /// Token usage of this turn, when the provider reported it.
    pub usage: Option<TurnUsage>,
}

/// A provider backend: opens one [`ProviderSession`] per ACP session.
pub trait ProviderAdapter {
    /// Opens the provider side of a new session. Must not block or spawn processes.
    fn open_session(&self, setup: SessionSetup) -> Box<dyn ProviderSession>;
}

/// The provider side of one ACP session; owns whatever the provider keeps between turns.
#[async_trait(?Send)]
pub trait ProviderSession {
    /// Runs one turn to its end, streaming updates into `sink`.
    ///
    /// When `cancel` fires the provider stops its work, closes open tool calls and returns
    /// `Ok` with [`StopReason::Cancelled`].
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError>;

    /// Stops anything still running (called on shutdown); must finish quickly.
    async fn shutdown(&mut self) {}

    /// The provider's own id of the conversation, once known (Codex thread id).
    fn thread_id(&self) -> Option<String> {
        None
    }
}
