//! The per-session actor: queues prompts, runs one provider turn at a time (within the turn
//! time limit, if any), and applies cancel, mode and config changes. It lives on the runtime's
//! `LocalSet`.

mod asks;
mod changes;
mod failure;
mod file_report;
mod finish;
mod inbox;
mod msg;
mod parts;
mod queued;
mod start;
mod steer;
mod summary;
mod title;
mod unrecorded;
mod vendor;

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    PromptRequest, PromptResponse, SessionId, SessionUpdate, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::file_report::Unavailable as file_report_reason;
use super::hold::Hold;
use super::options::OptionCatalog;
use super::sink::AcpSink;
use crate::error::ProviderError;
use crate::error::wire::reply;
use crate::permission::Mode;
use crate::plugin::Pipeline;
use crate::provider::{ProviderSession, SessionSettings, SessionSink, TurnOutcome};
use crate::sessions::journal::Journal;
use crate::sessions::registry::{Status, Tracked};
use crate::transport::OutputFlow;
pub(crate) use inbox::Inbox;
pub(crate) use msg::{Attached, SessionMsg};
pub(crate) use parts::SessionParts;
use parts::Takes;
use summary::Summary;

type TurnFuture = Pin<Box<dyn Future<Output = (Box<dyn ProviderSession>, TurnEnd)>>>;

/// How long a cancelled (or timed-out) turn's provider has to stop before its prompt is answered
/// anyway; the provider's clean-up goes on after, and the next turn waits for it.
const CANCEL_ANSWER: Duration = Duration::from_millis(800);

/// How long a closing session waits for its plugins to release what it held (an identity's
/// lock file) before it is answered anyway.
const RELEASE_WAIT: Duration = Duration::from_secs(5);

/// How a turn future ended.
enum TurnEnd {
    /// The provider ran the turn, or a cancel stopped it before the provider started.
    Ran(Result<TurnOutcome, ProviderError>),
    /// A required plugin refused the prompt; the provider never saw it.
    Refused(agent_client_protocol::Error),
}

struct Running {
    /// `None` once the prompt was answered while the provider was still stopping.
    responder: Option<Responder<PromptResponse>>,
    /// Prompts steered into this turn; each is answered as the turn is.
    steered: Vec<Responder<PromptResponse>>,
    /// Where steered prompts go (the provider reads the other end).
    steer: tokio::sync::mpsc::UnboundedSender<crate::provider::PromptInput>,
    /// Where cancels of the turn's subagent sessions go (the provider reads the other end).
    child_cancels: tokio::sync::mpsc::UnboundedSender<String>,
    cancel: CancellationToken,
    /// When the turn time limit stops this turn, if there is a limit.
    deadline: Option<Instant>,
    /// The limit was hit: the turn is being stopped and will be answered with a timeout error.
    timed_out: bool,
    /// The turn was cancelled: by when its prompt is answered, whether or not it has ended.
    answer_by: Option<Instant>,
    /// The records the journal had lost before this turn (those lost during it are its own).
    lost_before: u64,
    /// The ids of the AIR file change reports this turn's prompts asked for, until sent.
    reports: Vec<String>,
}

/// One session's state; `run` is its mailbox loop.
pub(crate) struct SessionActor {
    id: SessionId,
    cwd: std::path::PathBuf,
    cx: ConnectionTo<Client>,
    provider: Option<Box<dyn ProviderSession>>,
    mode: Mode,
    settings: SessionSettings,
    catalog: Rc<OptionCatalog>,
    pipeline: Rc<Pipeline>,
    flow: OutputFlow,
    queue: VecDeque<(PromptRequest, Responder<PromptResponse>)>,
    running: Option<Running>,
    shutting_down: bool,
    /// A prompt was cancelled and the editor has not spoken since: what the provider learns
    /// (models, slash commands) waits, so no `session/update` follows the cancelled answer
    /// (ACP: the cancelled turn's updates all come before it). The next request lets it out.
    hushed: bool,
    /// The longest a turn may run (`None`: no limit).
    turn_timeout: Option<Duration>,
    /// Where the session is recorded (`None`: it is not kept).
    journal: Option<Rc<Journal>>,
    /// Its registry entry (`None`: not indexed).
    registry: Option<Tracked>,
    /// The number of the last turn started (carried on from the journal after a load).
    turns: u64,
    /// acplb's state directory, where the summary goes (`None`: sessions are not kept).
    state_dir: Option<std::path::PathBuf>,
    /// When acplb is stopping: by when the summary must have come.
    summary_by: Option<Instant>,
    /// The session's input queue (`None`: sessions are not kept).
    inbox: Option<Inbox>,
    /// Updates held back while a load of this open session replays its history.
    hold: Rc<Hold>,
    /// What the client declared it takes: forms, typed failures.
    takes: Takes,
    /// The title the client set, if it did: the first prompt does not become one then.
    titled: Option<String>,
    /// The provider's thread id as last read, for while the provider is away running a turn.
    thread: Option<String>,
    /// What AIR's file change reports need, when the client declared them.
    file_report: Option<file_report::Reports>,
}

impl SessionActor {
    /// Providers of this session wait on `flow` when the client falls behind.
    pub(crate) fn with_output_flow(mut self, flow: OutputFlow) -> Self {
        self.flow = flow;
        self
    }

    /// Handles messages until shut down (or the runtime drops the sender) and no turn runs.
    pub(crate) async fn run(mut self, mut rx: UnboundedReceiver<SessionMsg>) {
        let mut turn: Option<TurnFuture> = None;
        let mut catalogs = self.provider.as_mut().and_then(|p| p.catalog_updates());
        let mut commands = self.provider.as_mut().and_then(|p| p.command_updates());
        let mut background = self.provider.as_mut().and_then(|p| p.background_updates());
        let mut asks = self.provider.as_mut().and_then(|p| p.background_asks());
        let mut mode_lists = self.provider.as_ref().and_then(|p| p.mode_updates());
        let mut rx_open = true;
        loop {
            if turn.is_none() && !self.shutting_down {
                turn = self.start_next_turn();
            }
            if turn.is_none() && self.shutting_down {
                break;
            }
            let deadline = self
                .running
                .as_ref()
                .filter(|r| !r.timed_out)
                .and_then(|r| r.deadline);
            let answer_by = self
                .running
                .as_ref()
                .filter(|r| r.responder.is_some())
                .and_then(|r| r.answer_by);
            // Watched until it fires: a cancel from anywhere (`session/cancel`, the prompt's
            // `$/cancel_request`, the time limit, shutdown) starts the answer's clock.
            let cancel = self
                .running
                .as_ref()
                .filter(|r| r.answer_by.is_none())
                .map(|r| r.cancel.clone());
            tokio::select! {
                // In this order: what the provider sent from beside its turns reaches the
                // editor before what the turn says next (a subagent's news from before the turn
                // took it up, then the turn's), and before the editor's next message is taken;
                // the turn comes last, so a turn flooded with Codex's messages (which spends
                // the task's budget) never starves the cancel, the clocks or the offers.
                biased;
                // Cancel-safe: an update not taken stays in the channel.
                update = changes::next_update(&mut background) => self.sink().update(update),
                // Cancel-safe: as above.
                ask = changes::next_update(&mut asks) => self.ask_beside(ask),
                // Cancel-safe: a message not taken stays in the channel. Not once it closed
                // (a closed channel is always ready, and would starve the turn below).
                msg = rx.recv(), if rx_open => {
                    if let Some(msg) = msg {
                        self.on_msg(msg);
                    } else {
                        rx_open = false;
                        self.on_msg(SessionMsg::Shutdown);
                    }
                }
                // Cancel-safe: a sleep holds no state; the deadline is read again next time.
                () = sleep_until(deadline) => self.on_turn_timeout(),
                // Cancel-safe: waiting for a token holds no state.
                () = cancelled(cancel) => self.on_turn_cancelled(),
                // Cancel-safe: as above.
                () = sleep_until(answer_by) => self.answer_cancelled(),
                // Cancel-safe: a value not taken stays in the channel, unseen.
                offered = changes::next_offer(&mut catalogs), if !self.hushed => self.catalog_changed(offered),
                // Cancel-safe: as above.
                offered = changes::next_offer(&mut commands), if !self.hushed => self.commands_changed(offered),
                // Cancel-safe: as above.
                listed = changes::next_offer(&mut mode_lists), if !self.hushed => self.modes_changed(listed),
                // Cancel-safe: the turn future is kept in `turn` and polled again next time.
                (provider, end) = poll_turn(&mut turn) => {
                    turn = None;
                    self.thread = provider.thread_id().or(self.thread.take());
                    self.provider = Some(provider);
                    match end {
                        TurnEnd::Ran(result) => self.finish_turn(result),
                        TurnEnd::Refused(error) => self.refuse_turn(error),
                    }
                }
            }
        }
        if let Some(inbox) = self.take_inbox() {
            inbox.close(&mut rx).await;
        }
        let summary = match self.summary_by {
            Some(deadline) => self.summarise(deadline).await,
            None => Summary::NotAsked,
        };
        if let Some(registry) = &self.registry {
            registry.released(match (self.summary_by, summary) {
                (None, _) => Status::Closed,
                (Some(_), Summary::Missed(_)) => Status::Interrupted,
                (Some(_), _) => Status::Idle,
            });
        }
        if let Some(provider) = self.provider.as_mut() {
            provider.shutdown().await;
        }
        let releasing = self.pipeline.on_session_closed(&self.id);
        if !releasing.is_empty()
            && tokio::time::timeout(RELEASE_WAIT, futures::future::join_all(releasing))
                .await
                .is_err()
        {
            tracing::warn!(session = %self.id, "what the session held is still being released (a slow disk?); the close goes on");
        }
        tracing::debug!(session = %self.id, "session actor stopped");
    }

    fn on_msg(&mut self, msg: SessionMsg) {
        if matches!(
            msg,
            SessionMsg::Prompt { .. }
                | SessionMsg::Steer { .. }
                | SessionMsg::Control { .. }
                | SessionMsg::SetMode { .. }
                | SessionMsg::SetConfig { .. }
        ) {
            self.hushed = false;
        }
        match msg {
            SessionMsg::Prompt { req, responder } | SessionMsg::Control { req, responder }
                if self.shutting_down =>
            {
                self.report_unasked(&req, file_report_reason::Cancelled);
                reply(responder.respond(PromptResponse::new(StopReason::Cancelled)));
            }
            SessionMsg::Control { req, responder } => {
                if let Some((req, responder)) = self.try_steer(req, responder, true) {
                    self.queue.push_back((req, responder));
                }
            }
            SessionMsg::Prompt { req, responder } => {
                if let Some((req, responder)) = self.try_steer(req, responder, false) {
                    // Queued, never interleaved: the next turn starts when this one ends.
                    self.queue.push_back((req, responder));
                }
            }
            SessionMsg::Cancel => self.cancel_all(),
            SessionMsg::CancelChild(child) => self.cancel_child(child),
            SessionMsg::SetMode { mode_id, responder } => self.set_mode(&mode_id, responder),
            SessionMsg::SetConfig { id, value, responder } => self.set_config(&id, &value, responder),
            SessionMsg::Shutdown => {
                if !self.shutting_down {
                    self.summary_by = Some(Instant::now() + crate::plugin::summary::SUMMARY_LIMIT);
                }
                self.shutting_down = true;
                self.cancel_all();
            }
            SessionMsg::Close => {
                self.shutting_down = true;
                self.cancel_all();
            }
            SessionMsg::Reattach { hold, answer } => self.reattach(hold, answer),
            SessionMsg::Replayed => self.hold.release(&self.cx, &self.flow),
            SessionMsg::SetTitle { title, said, answer } => self.set_title(title, said, answer),
            SessionMsg::Steer {
                req,
                prompt_required,
                responder,
            } => self.steer_vendor(req, prompt_required, responder),
            SessionMsg::Describe { answer } => self.describe(answer),
            SessionMsg::QueueOpened(queue) => self.on_queue_opened(queue),
            SessionMsg::QueueWake => self.pull_queue(),
            SessionMsg::QueueClaimed { queue, result } => self.on_queue_claimed(queue, result),
        }
    }

    /// The turn ran past the limit: it is stopped as a cancel would stop it (the provider
    /// kills its processes and closes open tool calls), then answered with a timeout error.
    fn on_turn_timeout(&mut self) {
        if let Some(running) = self.running.as_mut() {
            running.timed_out = true;
            running.cancel.cancel();
            tracing::warn!(session = %self.id, limit = ?self.turn_timeout, "turn hit the time limit; stopping it");
        }
    }

    fn cancel_all(&mut self) {
        if self.running.is_some() || !self.queue.is_empty() {
            self.hushed = true;
        }
        if let Some(running) = &self.running {
            running.cancel.cancel();
        }
        let queued: Vec<_> = self.queue.drain(..).collect();
        for (req, responder) in queued {
            self.report_unasked(&req, file_report_reason::Cancelled);
            reply(responder.respond(PromptResponse::new(StopReason::Cancelled)));
        }
    }

    /// `session/cancel` of the subagent session `child`: the running turn's provider stops its
    /// work (its parent goes on). With no turn running (or one being cancelled) it has none.
    fn cancel_child(&mut self, child: String) {
        match self.running.as_ref().filter(|r| !r.cancel.is_cancelled()) {
            Some(running) => {
                tracing::info!(session = %self.id, %child, "cancel of a subagent's work");
                if running.child_cancels.send(child).is_err() {
                    tracing::debug!(session = %self.id, "the turn has ended; no subagent to cancel");
                }
            }
            None => {
                tracing::debug!(session = %self.id, %child, "cancel of a subagent with no turn running; ignored");
            }
        }
    }

    fn sink(&self) -> AcpSink {
        AcpSink::new(
            self.id.clone(),
            self.cx.clone(),
            self.pipeline.clone(),
            self.flow.clone(),
        )
        .with_journal(self.journal.clone(), self.registry.clone())
        .with_hold(self.hold.clone())
        .with_forms(self.takes.forms)
        .with_air_subagents(self.takes.air_subagents)
        .with_file_changes(self.file_report.as_ref().map(file_report::Reports::changes))
    }

    /// Records in the journal, when the session is kept.
    pub(super) fn record(&self, write: impl FnOnce(&Journal)) {
        if let Some(journal) = &self.journal {
            write(journal);
        }
    }

    pub(super) fn notify(&self, update: SessionUpdate) {
        self.sink().update(update);
    }
}

/// Polls the running turn, or never resolves when there is none.
async fn poll_turn(turn: &mut Option<TurnFuture>) -> (Box<dyn ProviderSession>, TurnEnd) {
    match turn {
        Some(fut) => fut.await,
        None => std::future::pending().await,
    }
}

/// Resolves when `token` is cancelled, or never when there is none.
async fn cancelled(token: Option<CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `deadline`, or forever when there is none.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
