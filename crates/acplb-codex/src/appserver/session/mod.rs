//! One ACP session on the shared app-server: its Codex thread (started, or resumed on a new
//! server after the old one died) and its turns, with live updates, permission prompts,
//! steering and interrupt.

use std::time::Duration;

use acplb_core::CancellationToken;
use acplb_core::error::ProviderError;
use acplb_core::permission::Mode;
use acplb_core::provider::{
    PermissionAnswer, ProviderSession, SessionSettings, SessionSetup, SessionSink, TurnOutcome, TurnRequest,
};
use acplb_core::secrets::KnownSecrets;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionInfoUpdate, SessionUpdate, StopReason, ToolCallStatus,
};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::approval::{Ask, answer_user_input};
use super::commands::{self, Slash};
use super::config;
use super::decode::{AppDecoder, AppSignal, DecoderOptions, TurnEnd};
use super::early::{self, Early};
use super::rpc::{Gone, Inbox, Incoming, Rpc, RpcFailure};
use super::server::{AppServer, Conn};
use super::subagents::Subagents;
use super::turn_input;
use crate::images::ImageFiles;
use crate::outcome::cancelled;
use crate::prepare::{Continuation, check_cwd, check_prompt};
use crate::render::usage::Totals;
use crate::transcript::Transcript;

mod attempt;
mod background;
mod beside;
mod children;
mod finish;
mod follower;
mod forms;
mod goal;
mod interrupt;
mod requests;
mod thread;
mod turn;

use finish::{Start, inject_instructions, start_request};
use turn::TurnRun;

/// How long an interrupted turn may take to say it ended before acplb stops waiting.
const INTERRUPT_WAIT: Duration = Duration::from_secs(3);

#[derive(Debug)]
struct Thread {
    id: String,
    /// The server generation the thread is loaded on.
    generation: u64,
    inbox: Inbox,
}

/// The provider side of one ACP session on app-server.
#[derive(Debug)]
pub(crate) struct AppSession {
    server: AppServer,
    setup: SessionSetup,
    secrets: KnownSecrets,
    /// Where the model is reached, when the editor set it (`providers/set`).
    gateway: Option<crate::routing::Gateway>,
    thread: Option<Thread>,
    /// The id of a thread from an earlier server (or an earlier acplb), to resume.
    known_thread: Option<String>,
    /// For a forked session whose thread has not started yet: the source session's thread,
    /// to fork.
    fork_from: Option<String>,
    /// For a loaded session not yet resumed (or a fork not yet forked): what the conversation
    /// was, for a new thread if Codex no longer has the old one.
    fallback: Option<String>,
    totals: Totals,
    turns: u64,
    /// The thread name last shown as the session title.
    title: Option<String>,
    /// The model the thread runs (from `thread/start`), for `/status`.
    model: Option<String>,
    /// The last `thread/tokenUsage/updated` params, for `/status`.
    usage: Option<Value>,
    /// The thread being started in the background since the session opened.
    early: Option<JoinHandle<Option<Early>>>,
    /// Whether the thread's last turn ran in Codex's plan mode (the next one in another mode
    /// sets the default collaboration mode back).
    planning: bool,
    /// The skill the next turn's prompt invoked (`/$name`), set by the adapter.
    picked: crate::skills::Picked,
    /// The commands earlier turns left running (background terminals), followed to their end.
    background: background::Shared,
    /// What following them between turns shows, for the session actor
    /// (`background_updates`, taken once).
    updates: tokio::sync::mpsc::UnboundedSender<SessionUpdate>,
    updates_rx: Option<tokio::sync::mpsc::UnboundedReceiver<SessionUpdate>>,
    /// The task that follows them between turns, on the thread's server.
    follower: Option<JoinHandle<()>>,
    /// The thread's goal as the editor last saw it (ADR 0045).
    goal: Option<super::goals::Goal>,
    /// The subagents earlier turns announced as sessions (each one's life, ADR 0055).
    announced: Vec<String>,
    /// The last turn's subagents still working, shown between turns (ACP's shape): the
    /// follower feeds them their news, the next turn takes them up.
    parked: background::Parked,
    /// Where the router sends the follower what comes between turns (to see it is all taken).
    idle: Option<tokio::sync::mpsc::Sender<Incoming>>,
    /// Where questions for the editor go between turns (to the session actor,
    /// `background_asks`, taken once).
    editor: background::Editor,
    editor_rx: Option<tokio::sync::mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>>,
}

/// How the turn found its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Started, resumed or forked now, with this turn's instructions.
    Started,
    /// Started when the session opened, without this turn's instructions.
    Early,
    /// Running since an earlier turn.
    Continued,
}

impl Drop for AppSession {
    fn drop(&mut self) {
        if let Some(early) = self.early.take() {
            early.abort();
        }
        if let Some(follower) = self.follower.take() {
            follower.abort();
        }
    }
}

impl AppSession {
    /// The transcript of the turn; for its second attempt (`again`), the first's lines stay.
    fn transcript(&self, again: bool) -> Transcript {
        let open = if again {
            Transcript::open_again
        } else {
            Transcript::open
        };
        open(
            self.server.options().transcript_dir.as_deref(),
            &self.setup.session_id,
            self.turns,
            self.secrets.clone(),
        )
    }

    pub(crate) fn new(
        server: AppServer,
        mut setup: SessionSetup,
        picked: crate::skills::Picked,
        gateway: Option<crate::routing::Gateway>,
    ) -> Self {
        let Continuation {
            thread: known_thread,
            fork_from,
            fallback,
        } = Continuation::take(&mut setup, true);
        let mut secrets = KnownSecrets::from_mcp_servers(&setup.mcp_servers);
        if let Some(gateway) = &gateway {
            secrets.extend(&gateway.secrets());
        }
        // Before the thread starts: whatever the server prints from now on may hold them.
        server.serve(&secrets);
        let (updates, updates_rx) = tokio::sync::mpsc::unbounded_channel();
        let (editor, editor_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut session = Self {
            server,
            secrets,
            gateway,
            setup,
            thread: None,
            known_thread,
            fork_from,
            fallback,
            totals: Totals::default(),
            turns: 0,
            title: None,
            model: None,
            usage: None,
            early: None,
            planning: false,
            picked,
            background: background::Shared::default(),
            updates,
            updates_rx: Some(updates_rx),
            follower: None,
            goal: None,
            announced: Vec::new(),
            parked: background::Parked::default(),
            idle: None,
            editor,
            editor_rx: Some(editor_rx),
        };
        // An error here shows at the first prompt, which builds the same request again. A
        // loaded session resumes its thread at the first prompt instead, a fork forks it then.
        if session.known_thread.is_some() || session.fork_from.is_some() {
            return session;
        }
        if let Ok(params) = session.thread_params(Mode::default(), &SessionSettings::default(), &[]) {
            session.early = Some(early::start(session.server.clone(), params));
        }
        session
    }
}

impl AppSession {
    /// The prompt as Codex gets it (`/init` spelled out), checked, in a workspace that still
    /// exists.
    fn ready(&self, slash: Option<&Slash>, turn: &mut TurnRequest) -> Result<(), ProviderError> {
        if slash == Some(&Slash::Init) {
            commands::INIT_PROMPT.clone_into(&mut turn.prompt.text);
        }
        check_prompt(&turn.prompt.text)?;
        // The shared server runs elsewhere, so a deleted workspace shows only here.
        check_cwd(&self.setup.cwd)?;
        if !turn.env.is_empty() {
            tracing::debug!("per-turn environment from plugins is not supported on app-server; ignored");
        }
        Ok(())
    }
}

#[async_trait(?Send)]
impl ProviderSession for AppSession {
    async fn run_turn(
        &mut self,
        mut turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        self.turns += 1;
        let skill = self.picked.borrow_mut().take();
        let slash = commands::parse(&turn.prompt.text);
        if let Some(answered) = self.answer_here(slash.as_ref(), &turn, sink, &cancel).await {
            return answered;
        }
        self.ready(slash.as_ref(), &mut turn)?;
        // A server that died while idle can be found dead by the turn's own request first: the
        // turn starts once more, on a new server that resumes the thread.
        if let Some(outcome) = self
            .attempt(&turn, slash.clone(), skill.clone(), sink, &cancel, true)
            .await?
        {
            return Ok(outcome);
        }
        self.attempt(&turn, slash, skill, sink, &cancel, false)
            .await?
            .ok_or_else(|| ProviderError::Prepare("codex app-server stopped twice".into()))
    }

    async fn shutdown(&mut self) {
        let parked = self.parked.borrow_mut().take();
        if let Some(thread) = self.thread.take()
            && let Some(conn) = self.server_conn()
        {
            // The subagents its turns left working stop with it: nobody would see what they do
            // (ADR 0058).
            if let Some(mut parked) = parked.filter(|_| thread.generation == conn.generation) {
                follower::withdraw_all(&mut parked, &conn.rpc);
                super::subagents::stop(&conn.rpc, &conn.marker, parked.threads()).await;
            }
            conn.rpc.unsubscribe(&thread.id);
            // Codex keeps a thread's background terminals while its server runs: a closed
            // session's go with it (ADR 0041).
            if !self.background.borrow().is_empty() && thread.generation == conn.generation {
                background::stop_on_close(&conn.rpc, &thread.id).await;
            }
        }
    }

    fn background_updates(&mut self) -> Option<tokio::sync::mpsc::UnboundedReceiver<SessionUpdate>> {
        self.updates_rx.take()
    }

    fn background_asks(
        &mut self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>> {
        self.editor_rx.take()
    }

    fn announce_again(&self) -> Vec<SessionUpdate> {
        self.background.borrow().announcements()
    }

    fn thread_id(&self) -> Option<String> {
        self.known_thread.clone()
    }
}
