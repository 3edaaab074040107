//! The ordered plugin pipeline configured in `composer.toml`: hooks at session start, on each
//! prompt and on each session update, run in the configured order.

pub mod composer;
pub mod paths;
mod pipeline;
pub mod registry;
mod source;
pub mod summary;
pub mod trust;

pub use pipeline::{Pipeline, PluginEntry};
pub use source::{
    ComposerPipelines, Ignored, Lookup, NoPlugins, PipelineSource, PluginResolution, SessionNotice,
    SessionPlugins,
};

pub use agent_client_protocol::v1::schema::SessionId;
use agent_client_protocol::v1::schema::{McpServer, SessionUpdate};
use futures::future::LocalBoxFuture;

use crate::provider::TurnRequest;

/// A plugin failure, naming the plugin.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("plugin `{plugin}` failed: {message}")]
pub struct PluginError {
    /// The plugin id.
    pub plugin: String,
    /// What went wrong.
    pub message: String,
}

impl PluginError {
    /// An error of plugin `plugin`.
    pub fn new(plugin: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            plugin: plugin.into(),
            message: message.into(),
        }
    }
}

/// What a plugin may add when a session starts.
#[derive(Debug, Default)]
pub struct SessionStart {
    /// The ACP session id.
    pub session_id: String,
    /// The session's absolute working directory.
    pub cwd: std::path::PathBuf,
    /// MCP servers for the provider (the client's, plus what plugins add).
    pub mcp_servers: Vec<McpServer>,
    /// Environment for the provider process.
    pub env: Vec<(String, String)>,
    /// Developer instructions for every turn of the session.
    pub developer_instructions: Vec<String>,
    /// Who the session is in an agent team, when a plugin claimed an identity for it (the
    /// session registry files sessions by it).
    pub identity: Option<TeamIdentity>,
}

/// A member of an agent team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamIdentity {
    /// The member's name.
    pub name: String,
    /// The team.
    pub team: String,
}

/// What a plugin knows about the prompt it is looking at.
#[derive(Debug, Clone)]
pub struct PromptContext {
    /// The ACP session.
    pub session_id: SessionId,
    /// The session's workspace.
    pub cwd: std::path::PathBuf,
    /// The provider's conversation id (Codex thread id), once the first turn has started one.
    pub thread_id: Option<String>,
}

/// What [`Plugin::prompt_async`] returns: a future on the session's thread (not `Send`).
pub type HookFuture<'a> = LocalBoxFuture<'a, Result<(), String>>;

/// A plugin: every hook has a do-nothing default, so a plugin implements only what it needs.
///
/// A session's plugins are built and started on the blocking pool (they may read and lock
/// files), then run on the session's thread: a plugin moves between threads, so it is `Send`.
pub trait Plugin: Send {
    /// Called once when a session starts, on the blocking pool: it may read, create and lock
    /// files (an identity lock, an audit log), and the session waits for it within a limit.
    fn session_start(&self, _start: &mut SessionStart) -> Result<(), String> {
        Ok(())
    }

    /// Called for every prompt before it reaches the provider; may rewrite it or add
    /// developer instructions and environment for this turn.
    ///
    /// For work that never waits. Called by the default [`Plugin::prompt_async`].
    fn prompt(&self, _ctx: &PromptContext, _turn: &mut TurnRequest) -> Result<(), String> {
        Ok(())
    }

    /// The prompt hook as the pipeline runs it: a future the session awaits, so a plugin can
    /// wait for files under a lock or a child process without stalling other sessions.
    ///
    /// Every session shares one thread, so the wait itself must be async
    /// (`tokio::task::spawn_blocking`, `tokio::process`, `tokio::time`), never a blocking call,
    /// and bounded by a time limit. A `session/cancel` drops the future. The default runs
    /// [`Plugin::prompt`].
    fn prompt_async<'a>(&'a self, ctx: &'a PromptContext, turn: &'a mut TurnRequest) -> HookFuture<'a> {
        Box::pin(std::future::ready(self.prompt(ctx, turn)))
    }

    /// Called for every session update; returns the update (possibly changed) or `None` to drop it.
    fn update(&self, _session: &SessionId, update: SessionUpdate) -> Option<SessionUpdate> {
        Some(update)
    }

    /// Called after a turn's response has been written to the client.
    fn turn_finished(&self, _session: &SessionId) {}

    /// The question to ask the session for a summary when acplb shuts down, if this plugin
    /// wants one (`session-summary`).
    fn summary_prompt(&self) -> Option<String> {
        None
    }

    /// Called when the session ends (`session/close`, or acplb stopping): release what the
    /// session held (an identity claim, say). Work that must run off the runtime thread (a
    /// lock file removed) is handed back: the close is answered once it is done, so a client
    /// that closed a session finds what it held released.
    fn session_closed(&self, _session: &SessionId) -> Option<tokio::task::JoinHandle<()>> {
        None
    }
}
