//! The provider seam: what a coding-agent backend (Codex today) must implement for the runtime.
//!
//! `acplb-core` knows no provider. A [`ProviderAdapter`] opens one [`ProviderSession`] per ACP
//! session; the session actor calls [`ProviderSession::run_turn`] once per prompt, handing it a
//! [`SessionSink`] for `session/update` notifications and a cancellation token.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AuthMethod, AvailableCommand, ClientCapabilities, McpServer, StopReason,
};
use async_trait::async_trait;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use crate::auth::{AuthFailure, SignInUi};
use crate::error::ProviderError;
use crate::permission::Mode;
use crate::session::modes::ProviderModes;
use crate::session::options::OptionCatalog;

pub mod air_ids;
mod failure;
pub mod followers;
pub mod route;
mod sink;
mod steer;
mod vendor;

pub use failure::{AIR_SESSION_FAILURE, FailureKind, Incident, Severity};
pub use sink::{
    BackgroundAsk, BesideForm, CollectingSink, ElicitAnswer, ElicitAsk, PermissionAnswer, PermissionAsk,
    SessionSink, tell_user,
};
pub use steer::SteerInbox;
pub use vendor::{VendorFailure, VendorSession};

/// What the editor chose for a session: model, reasoning effort, network access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionSettings {
    /// Model slug, `None` for the provider's default.
    pub model: Option<String>,
    /// Reasoning effort (`low`, `medium`, `high`, `xhigh`), `None` for the default.
    pub reasoning_effort: Option<String>,
    /// Whether sandboxed commands may use the network (only meaningful in `auto` mode).
    pub network_access: bool,
    /// What a prompt sent while a turn runs does: wait for its own turn, or join the running
    /// one (only where the provider can steer).
    pub while_busy: WhileBusy,
    /// The provider mode the session is in (`session/modes.rs`), whose id the provider gave;
    /// `None` in acplb's own modes.
    pub provider_mode: Option<String>,
}

/// What a prompt sent while a turn runs does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WhileBusy {
    /// It waits and runs as the next turn.
    #[default]
    Queue,
    /// It is sent into the running turn (the model sees it at its next step).
    Steer,
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
#[expect(
    clippy::struct_excessive_bools,
    reason = "each bool is one capability the client advertised, read on its own"
)]
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
    /// Directories writable beside `cwd` (the client's `additionalDirectories`: absolute,
    /// existing).
    pub additional_directories: Vec<PathBuf>,
    /// Whether the client shows `notice` updates (`session.notices` capability).
    pub client_shows_notices: bool,
    /// Whether the client renders command output as Zed's terminals: it advertised
    /// `clientCapabilities._meta.terminal_output: true` (ADR 0033). Such a client gets
    /// `terminal` content and the `terminal_info` / `terminal_output` / `terminal_exit` `_meta`
    /// of tool call updates, never a `terminal/*` request.
    pub client_terminal_output: bool,
    /// Whether the client advertised `clientCapabilities.session.compaction`: only then may
    /// the provider send `compaction_update` and `compaction_summary_chunk` (ADR 0037).
    pub client_compaction: bool,
    /// Whether the client advertised `clientCapabilities.plan` (ACP's unstable plan
    /// operations): a plan may then come as `plan_update` with markdown, which it shows as a
    /// plan instead of text (ADR 0053).
    pub client_plan_updates: bool,
    /// Whether and how the client takes subagent sessions (ACP's unstable subagents, or AIR's
    /// `nativeSubagentSessions`): a provider may then show a child agent as a session of its
    /// own, announced with `subagent_update` and its updates marked for it (`route`, ADR 0055).
    pub client_subagents: Option<crate::capabilities::SubagentSessions>,
    /// What a `JetBrains` AIR client declared (`clientCapabilities._meta.jetbrains.air`, ADR
    /// 0049), `None` for any other client: a provider adds AIR's metadata only for the
    /// capabilities declared here.
    pub client_air: Option<crate::capabilities::Air>,
    /// Set when the session continues one from an earlier process (`session/load`,
    /// `session/resume`): the conversation to go on with.
    pub resume: Option<Resume>,
    /// Set when a new session branches off a kept one (`session/new` with
    /// `_meta: {"acplb/forkOf": "<session id>"}`): the conversation it starts from.
    pub fork: Option<Fork>,
    /// The `_meta` of the client's `session/new`, as the client sent it; for a loaded or
    /// resumed session, the keys of it the provider keeps ([`ProviderAdapter::kept_meta`]).
    /// Core does not read it for the provider: a provider takes the keys of its own namespace
    /// (the Codex provider: `acplb/codex`).
    pub meta: serde_json::Map<String, serde_json::Value>,
}

/// The conversation a loaded or resumed session goes on with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    /// The provider's thread, as the journal last recorded it (`None`: never learned).
    pub thread_id: Option<String>,
    /// What the earlier conversation was (its saved summary, else a digest of its journal),
    /// for the developer instructions of a new thread when `thread_id` cannot be resumed.
    pub context: Option<String>,
}

/// The conversation a forked session starts from: a new conversation of its own that begins
/// with everything the source session's conversation had.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fork {
    /// The source session's provider thread, as its journal last recorded it (`None`: never
    /// learned); a provider that can fork threads forks this one.
    pub thread_id: Option<String>,
    /// What the source conversation was (its saved summary, else a digest of its journal), for
    /// the developer instructions of a new thread when the provider cannot fork `thread_id`.
    pub context: Option<String>,
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
    /// They take effect where a conversation starts; later turns see them only as `notes`.
    pub developer_instructions: Vec<String>,
    /// News from plugins the model must see in this very turn, also on a continued
    /// conversation (mail waiting, a changed identity block); each transport delivers them its
    /// own way (a resumed `codex exec` after the prompt, app-server as developer messages).
    pub notes: Vec<String>,
    /// Extra environment for this turn only (from plugins).
    pub env: Vec<(String, String)>,
    /// Prompts steered into this turn while it runs.
    pub steer: SteerInbox,
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

/// What a provider offers and how the runtime should speak of it; the runtime holds no
/// provider's words or decisions of its own.
#[derive(Debug, Clone)]
pub struct ProviderCapabilities {
    /// Models and efforts offered as config options, the agent's name, whether it asks before
    /// it acts and whether it can be steered.
    pub catalog: OptionCatalog,
    /// Why MCP servers over SSE are refused, completing "… uses SSE, which {why}", when they
    /// are (`None`: accepted).
    pub refuses_sse_mcp: Option<String>,
    /// Slash commands for `available_commands_update`.
    pub commands: Vec<AvailableCommand>,
    /// The `JetBrains` AIR extension capabilities the provider answers (`diffPatch`, …; ADR
    /// 0049), listed to an AIR client in `initialize` beside the runtime's own.
    pub air: Vec<&'static str>,
}

/// A provider backend: opens one [`ProviderSession`] per ACP session.
#[async_trait(?Send)]
pub trait ProviderAdapter {
    /// What this provider offers (asked once per `initialize` and `session/new`).
    fn capabilities(&self) -> ProviderCapabilities;

    /// Opens the provider side of a new session. May start work in the background, but must
    /// not wait for a child process to be ready: `session/new` is answered once it returns.
    async fn open_session(&self, setup: SessionSetup) -> Result<Box<dyn ProviderSession>, ProviderError>;

    /// What of `session/new`'s `_meta` (keys of the provider's own namespace, or of a client
    /// extension it reads, with values it accepts) is kept with a session in its journal and given back in [`SessionSetup::meta`]
    /// when another process loads or resumes it, so what the opening client asked of the
    /// provider (a profile, say) holds for the whole session. Also applied to what a journal
    /// gives back. Nothing is kept by default.
    fn kept_meta(
        &self,
        _meta: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    /// Stops what the provider shares between sessions (a long-lived child); called once,
    /// after every session has shut down. Must finish quickly.
    async fn shutdown(&self) {}

    /// Whether what the provider keeps running (a long-lived child) is alive and answering;
    /// `Err` says what is wrong. Providers with nothing running between turns are healthy.
    /// The worker daemon asks this on its health-check interval.
    async fn health(&self) -> Result<(), String> {
        Ok(())
    }

    /// The ways in this provider offers a client with these capabilities (`authMethods` of
    /// `initialize`); none by default.
    fn auth_methods(&self, client: &ClientCapabilities) -> Vec<AuthMethod> {
        let _ = client;
        Vec::new()
    }

    /// Signs the user in with `method` (one of [`ProviderAdapter::auth_methods`]); `meta` is
    /// the request's `_meta` (where a client puts what the method needs, an API key). Pages
    /// and codes reach the user through `ui`.
    async fn authenticate(
        &self,
        method: &str,
        meta: &serde_json::Map<String, serde_json::Value>,
        ui: &dyn SignInUi,
    ) -> Result<(), AuthFailure> {
        let _ = (meta, ui);
        Err(AuthFailure::UnknownMethod {
            method: method.to_owned(),
            known: Vec::new(),
        })
    }

    /// Who is signed in (`auth/status`, unstable ACP: ADR 0037); unknown by default.
    async fn auth_status(
        &self,
    ) -> Result<agent_client_protocol::v1::schema::AuthStatusResponse, AuthFailure> {
        use agent_client_protocol::v1::schema::{AuthState, AuthStatusResponse};
        Ok(AuthStatusResponse::new(AuthState::Unknown))
    }

    /// Ticks when the sign-in may have changed outside acplb's own `authenticate` and
    /// `logout` (the provider's own account notices); the runtime then asks
    /// [`ProviderAdapter::auth_status`] again and tells the client if it differs
    /// (`auth/status_update`, ADR 0043). `None` (the default): nothing to watch.
    fn auth_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        None
    }

    /// Signs the user out (`logout`).
    async fn logout(&self) -> Result<(), AuthFailure> {
        Err(AuthFailure::Failed(
            "this agent has nothing to sign out of".into(),
        ))
    }

    /// Where the provider's model is reached, when the editor may set it (`providers/*`);
    /// `None` (the default): the provider offers no such thing.
    fn routing(&self) -> Option<&dyn crate::routing::ModelRouting> {
        None
    }

    /// Deletes the provider's own record of conversation `thread_id` (its session was deleted:
    /// `session/delete`). Providers that keep nothing of their own have nothing to do.
    async fn delete_thread(&self, thread_id: &str) -> Result<(), ProviderError> {
        let _ = thread_id;
        Ok(())
    }

    /// Names conversation `thread_id` `title` in the provider's own records
    /// (`session/set_title`, `/rename`); nothing to do by default.
    async fn rename_thread(&self, thread_id: &str, title: &str) -> Result<(), ProviderError> {
        let _ = (thread_id, title);
        Ok(())
    }

    /// Archives (`archived`) or unarchives conversation `thread_id` in the provider's own
    /// records (`session/archive`, `session/unarchive`); nothing to do by default.
    async fn archive_thread(&self, thread_id: &str, archived: bool) -> Result<(), ProviderError> {
        let _ = (thread_id, archived);
        Ok(())
    }

    /// Answers vendor request `method` (one the runtime does not answer itself: ADR 0046) with
    /// the JSON result. `session` is the open session its `sessionId` names, when it names one
    /// (a request naming a session that is not open here never reaches the provider). Knows
    /// none by default.
    async fn vendor_request(
        &self,
        method: &str,
        params: &serde_json::Value,
        session: Option<&VendorSession>,
    ) -> Result<serde_json::Value, VendorFailure> {
        let _ = (params, session);
        Err(VendorFailure::NotMine(method.to_owned()))
    }
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

    /// The models and efforts this session offers, when the provider learned them while it
    /// opened the session (asked its backend); `None`: those of [`ProviderCapabilities`].
    fn catalog(&self) -> Option<OptionCatalog> {
        None
    }

    /// The models and efforts the provider learns after the session opened (it asked its
    /// backend again), each newer than [`catalog`](Self::catalog)'s; the session shows each to
    /// the editor as a `config_option_update`. Taken once, when the session starts.
    fn catalog_updates(&mut self) -> Option<tokio::sync::watch::Receiver<OptionCatalog>> {
        None
    }

    /// The modes the provider adds to this session ([`ProviderModes`]), learned behind its
    /// opening: [`ProviderModes::Asking`] until the provider knows. A session that opens in one
    /// of them (its initial mode, or a load of a session that was in one) waits briefly for the
    /// list; any other is answered at once and shown the list as a `config_option_update`.
    /// Each call is a new watcher of the same list (the opening reads it, the session watches).
    fn mode_updates(&self) -> Option<tokio::sync::watch::Receiver<ProviderModes>> {
        None
    }

    /// The slash commands the provider learns after the session opened (its backend listed
    /// more, or they changed), each the whole list in place of
    /// [`ProviderCapabilities::commands`]; the session shows each to the editor as an
    /// `available_commands_update`. Taken once, when the session starts.
    fn command_updates(&mut self) -> Option<tokio::sync::watch::Receiver<Vec<AvailableCommand>>> {
        None
    }

    /// Updates the provider learns between turns about work a turn left running (Codex's
    /// background terminals: their output and their end); the session sends each to the
    /// editor as it comes, like a turn's. Taken once, when the session starts.
    fn background_updates(
        &mut self,
    ) -> Option<UnboundedReceiver<agent_client_protocol::v1::schema::SessionUpdate>> {
        None
    }

    /// Permission questions the provider has for the editor between turns, about work a turn
    /// left running (Codex: a subagent still working asks to run a command); the session puts
    /// each to the editor as it comes and sends the answer back. Taken once, when the session
    /// starts.
    fn background_asks(&mut self) -> Option<UnboundedReceiver<BackgroundAsk>> {
        None
    }

    /// Updates that announce again what a turn left running, sent after a `session/load` of
    /// this open session has replayed its history (Codex: AIR's `async_task_spawned` of each
    /// background terminal still followed, which the journal does not keep: ADR 0051).
    fn announce_again(&self) -> Vec<agent_client_protocol::v1::schema::SessionUpdate> {
        Vec::new()
    }
}
