//! A scripted provider: each prompt's turn follows a script the test wrote, and everything the
//! runtime asks of the provider is written on the shared [`Timeline`].

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use acplb_core::CancellationToken;
use acplb_core::error::ProviderError;
use acplb_core::provider::{
    PermissionAsk, ProviderAdapter, ProviderCapabilities, ProviderSession, SessionSetup, SessionSink,
    TurnOutcome, TurnRequest,
};
use acplb_core::session::options::OptionCatalog;
use agent_client_protocol::v1::schema::{
    AvailableCommand, ContentChunk, PermissionOption, PermissionOptionKind, SessionUpdate, StopReason,
    ToolCallUpdate, ToolCallUpdateFields,
};
use async_trait::async_trait;
use futures::FutureExt as _;

use crate::timeline::Timeline;

/// A signal the test gives: steps wait for it. Once opened it stays open.
#[derive(Clone, Debug, Default)]
pub struct Gate(CancellationToken);

impl Gate {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn open(&self) {
        self.0.cancel();
    }

    async fn passed(&self) {
        self.0.cancelled().await;
    }
}

/// One step of a turn. Before each step the turn checks its cancellation and, when it was
/// cancelled, returns `Cancelled` (as a provider that honours cancel does).
#[derive(Clone, Debug)]
pub enum Step {
    /// An agent message chunk.
    Say(String),
    /// Waits for the gate, or returns `Cancelled` as soon as the turn is cancelled.
    Wait(Gate),
    /// Waits for the gate whether cancelled or not (a provider slow to stop).
    Stall(Gate),
    /// Asks the editor (options `allow` and `reject`) and writes down the answer; a cancel
    /// while it waits abandons the ask and returns `Cancelled`.
    Ask,
    /// Waits for a prompt steered into the turn (or a cancel) and writes down its text.
    ReadSteer,
    /// Writes down whether a prompt was steered into the turn, without waiting.
    CheckInbox,
    /// Fails the turn with the provider's message.
    Fail(String),
    /// Sends an agent message chunk through the session's updates from beside its turns, as a
    /// helper task would, and lets the runtime run before the turn goes on.
    Beside(String),
}

/// An agent message chunk step.
pub fn say(text: &str) -> Step {
    Step::Say(text.to_owned())
}

/// How `open_session` behaves, one entry per `session/new`, in order (then `Ready`).
#[derive(Debug)]
pub enum Open {
    /// Opens at once.
    Ready,
    /// Opens once the gate is opened.
    After(Gate),
    /// Fails with this error.
    Fail(ProviderError),
}

struct Inner {
    timeline: Timeline,
    turns: RefCell<HashMap<String, Vec<Step>>>,
    opens: RefCell<VecDeque<Open>>,
    capabilities: ProviderCapabilities,
    /// Command lists offered after the sessions opened; every session watches it.
    later_commands: tokio::sync::watch::Sender<Vec<AvailableCommand>>,
    /// Questions between turns, for the next session that opens to hand to the runtime.
    asks: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>>>,
    asker: tokio::sync::mpsc::UnboundedSender<acplb_core::provider::BackgroundAsk>,
    /// Updates from beside the turns, for the next session that opens to hand to the runtime.
    beside: RefCell<Option<tokio::sync::mpsc::UnboundedReceiver<SessionUpdate>>>,
    besider: tokio::sync::mpsc::UnboundedSender<SessionUpdate>,
}

/// The provider adapter; clones share the scripts and the timeline.
#[derive(Clone)]
pub struct Scripted(Rc<Inner>);

impl Scripted {
    /// A provider that can steer and lists no commands. A prompt without a script of its own
    /// answers `reply to <prompt>` and ends its turn.
    pub fn new(timeline: &Timeline) -> Self {
        Self::with(timeline, true, Vec::new())
    }

    /// A provider whose catalog says it cannot steer.
    pub fn without_steer(timeline: &Timeline) -> Self {
        Self::with(timeline, false, Vec::new())
    }

    /// A provider offering these slash commands.
    pub fn with_commands(timeline: &Timeline, commands: &[(&str, &str)]) -> Self {
        let commands = commands
            .iter()
            .map(|(name, about)| AvailableCommand::new(*name, *about))
            .collect();
        Self::with(timeline, true, commands)
    }

    /// Offers open sessions this command list in place of the one they have.
    pub fn offer_commands(&self, commands: &[(&str, &str)]) {
        self.0.later_commands.send_replace(
            commands
                .iter()
                .map(|(name, about)| AvailableCommand::new(*name, *about))
                .collect(),
        );
    }

    fn with(timeline: &Timeline, steer: bool, commands: Vec<AvailableCommand>) -> Self {
        let catalog = OptionCatalog {
            models: vec![("model-a".into(), "Model A".into())],
            model_efforts: Vec::new(),
            efforts: vec!["low".into(), "high".into()],
            default_model: None,
            agent: "Scripted".into(),
            asks: true,
            steer,
            booleans: false,
            mode_meta: acplb_core::session::options::ModeMeta::Plain,
            refuses_plan: None,
            provider_modes: Vec::new(),
            initial_mode: None,
            recommended: acplb_core::session::options::Recommended::default(),
            recommendations: acplb_core::session::options::Recommendations::Hidden,
        };
        let (asker, asks) = tokio::sync::mpsc::unbounded_channel();
        let (besider, beside) = tokio::sync::mpsc::unbounded_channel();
        Self(Rc::new(Inner {
            timeline: timeline.clone(),
            turns: RefCell::default(),
            opens: RefCell::default(),
            capabilities: ProviderCapabilities {
                catalog,
                refuses_sse_mcp: None,
                commands,
                air: Vec::new(),
            },
            later_commands: tokio::sync::watch::Sender::new(Vec::new()),
            asks: RefCell::new(Some(asks)),
            asker,
            beside: RefCell::new(Some(beside)),
            besider,
        }))
    }

    /// Puts `ask` to the editor between turns (through the first session that opened); the
    /// editor's answer comes on the receiver returned.
    pub fn ask_between_turns(
        &self,
        ask: PermissionAsk,
    ) -> tokio::sync::oneshot::Receiver<acplb_core::provider::PermissionAnswer> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let sent = self
            .0
            .asker
            .send(acplb_core::provider::BackgroundAsk { ask, answer });
        assert!(sent.is_ok(), "a session takes questions between turns");
        answered
    }

    /// The turn of the prompt `prompt` follows `steps`.
    pub fn script(&self, prompt: &str, steps: Vec<Step>) {
        self.0.turns.borrow_mut().insert(prompt.to_owned(), steps);
    }

    /// The next `session/new` opens this way.
    pub fn next_open(&self, open: Open) {
        self.0.opens.borrow_mut().push_back(open);
    }
}

#[async_trait(?Send)]
impl ProviderAdapter for Scripted {
    fn capabilities(&self) -> ProviderCapabilities {
        self.0.capabilities.clone()
    }

    async fn open_session(&self, setup: SessionSetup) -> Result<Box<dyn ProviderSession>, ProviderError> {
        let open = self.0.opens.borrow_mut().pop_front().unwrap_or(Open::Ready);
        let id = setup.session_id;
        match open {
            Open::Ready => {}
            Open::After(gate) => {
                self.0.timeline.push(format!("provider opening {id}"));
                gate.passed().await;
            }
            Open::Fail(e) => {
                self.0.timeline.push(format!("provider open failed: {e}"));
                return Err(e);
            }
        }
        self.0.timeline.push(format!("provider open {id}"));
        Ok(Box::new(ScriptedSession {
            inner: self.0.clone(),
            id,
        }))
    }

    async fn shutdown(&self) {
        self.0.timeline.push("provider shutdown");
    }
}

struct ScriptedSession {
    inner: Rc<Inner>,
    id: String,
}

#[async_trait(?Send)]
impl ProviderSession for ScriptedSession {
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        let prompt = turn.prompt.text.clone();
        let steps = self.inner.turns.borrow().get(&prompt).cloned();
        let steps = steps.unwrap_or_else(|| vec![Step::Say(format!("reply to {prompt}"))]);
        let log = &self.inner.timeline;
        log.push(format!("provider start {prompt}"));
        let result = run(&steps, &turn, sink, &cancel, log, &self.inner.besider).await;
        let end = match &result {
            Ok(outcome) => stop_name(outcome.stop_reason),
            Err(e) => format!("failed: {e}"),
        };
        log.push(format!("provider end {prompt}: {end}"));
        result
    }

    async fn shutdown(&mut self) {
        self.inner
            .timeline
            .push(format!("provider session shutdown {}", self.id));
    }

    fn command_updates(&mut self) -> Option<tokio::sync::watch::Receiver<Vec<AvailableCommand>>> {
        Some(self.inner.later_commands.subscribe())
    }

    fn background_asks(
        &mut self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>> {
        self.inner.asks.borrow_mut().take()
    }

    fn background_updates(&mut self) -> Option<tokio::sync::mpsc::UnboundedReceiver<SessionUpdate>> {
        self.inner.beside.borrow_mut().take()
    }
}

/// Runs the steps of the turn of `turn.prompt`.
async fn run(
    steps: &[Step],
    turn: &TurnRequest,
    sink: &dyn SessionSink,
    cancel: &CancellationToken,
    log: &Timeline,
    beside: &tokio::sync::mpsc::UnboundedSender<SessionUpdate>,
) -> Result<TurnOutcome, ProviderError> {
    let prompt = &turn.prompt.text;
    let cancelled = || Ok(outcome(StopReason::Cancelled));
    for step in steps {
        if cancel.is_cancelled() {
            return cancelled();
        }
        match step {
            Step::Say(text) => sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                text.clone().into(),
            ))),
            Step::Wait(gate) => tokio::select! {
                biased;
                () = cancel.cancelled() => return cancelled(),
                () = gate.passed() => {}
            },
            Step::Stall(gate) => gate.passed().await,
            Step::Ask => {
                let answer = tokio::select! {
                    biased;
                    () = cancel.cancelled() => {
                        log.push(format!("provider ask of {prompt} abandoned"));
                        return cancelled();
                    }
                    answer = sink.request_permission(ask(prompt)) => answer,
                };
                log.push(format!("provider {prompt} was answered {answer:?}"));
            }
            Step::ReadSteer => {
                let steered = tokio::select! {
                    biased;
                    () = cancel.cancelled() => return cancelled(),
                    input = turn.steer.next() => input,
                };
                log.push(format!("provider {prompt} steered by {}", steered.text));
            }
            Step::CheckInbox => match turn.steer.next().now_or_never() {
                Some(input) => log.push(format!("provider {prompt} steered by {}", input.text)),
                None => log.push(format!("provider {prompt} inbox empty")),
            },
            Step::Fail(message) => {
                return Err(ProviderError::turn_failed(message.clone()));
            }
            Step::Beside(text) => {
                let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(text.clone().into()));
                assert!(
                    beside.send(chunk).is_ok(),
                    "the runtime takes updates from beside"
                );
                tokio::task::yield_now().await;
            }
        }
    }
    if cancel.is_cancelled() {
        return cancelled();
    }
    Ok(outcome(StopReason::EndTurn))
}

/// The question step [`Step::Ask`] of `prompt` puts: "run <prompt>", allow or reject.
pub fn ask(prompt: &str) -> PermissionAsk {
    PermissionAsk {
        tool_call: ToolCallUpdate::new(
            format!("call-{prompt}"),
            ToolCallUpdateFields::new().title(format!("run {prompt}")),
        ),
        options: vec![
            PermissionOption::new("allow", "Allow", PermissionOptionKind::AllowOnce),
            PermissionOption::new("reject", "Reject", PermissionOptionKind::RejectOnce),
        ],
        meta: None,
        session: None,
    }
}

fn outcome(stop_reason: StopReason) -> TurnOutcome {
    TurnOutcome {
        stop_reason,
        usage: None,
    }
}

/// `end_turn`, `cancelled`, ... as on the wire.
pub fn stop_name(stop: StopReason) -> String {
    serde_json::to_value(stop)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{stop:?}"))
}
