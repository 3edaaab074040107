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
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::approval::{Ask, answer_user_input};
use super::commands::{self, Slash};
use super::config;
use super::decode::{AppDecoder, AppDecoderOptions, AppSignal, TurnEnd};
use super::early::{self, Early};
use super::rpc::{Gone, Incoming, Rpc, RpcFailure};
use super::server::{AppServer, Conn};
use super::turn_input;
use crate::decode::{Totals, turn_delta};
use crate::images::ImageFiles;
use crate::instructions;
use crate::transcript::Transcript;

/// Codex refuses longer input (`input_too_large`); checking first gives a clear error.
const MAX_PROMPT_CHARS: usize = 1 << 20;

/// How long an interrupted turn may take to say it ended before acplb stops waiting.
const INTERRUPT_WAIT: Duration = Duration::from_secs(3);

#[derive(Debug)]
struct Thread {
    id: String,
    /// The server generation the thread is loaded on.
    generation: u64,
    rx: mpsc::UnboundedReceiver<Incoming>,
}

/// The provider side of one ACP session on app-server.
#[derive(Debug)]
pub(crate) struct AppSession {
    server: AppServer,
    setup: SessionSetup,
    secrets: KnownSecrets,
    thread: Option<Thread>,
    /// The id of a thread from an earlier server, to resume.
    known_thread: Option<String>,
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
}

/// How the turn found its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Started or resumed now, with this turn's instructions.
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
    }
}

impl AppSession {
    pub(crate) fn new(server: AppServer, setup: SessionSetup) -> Self {
        let mut session = Self {
            server,
            secrets: KnownSecrets::from_mcp_servers(&setup.mcp_servers),
            setup,
            thread: None,
            known_thread: None,
            totals: Totals::default(),
            turns: 0,
            title: None,
            model: None,
            usage: None,
            early: None,
        };
        // An error here shows at the first prompt, which builds the same request again.
        if let Ok(params) = session.thread_params(Mode::default(), &SessionSettings::default(), &[]) {
            session.early = Some(early::start(session.server.clone(), params));
        }
        session
    }

    /// `thread/start` (and `thread/resume`) params for this session.
    fn thread_params(
        &self,
        mode: Mode,
        settings: &SessionSettings,
        turn_instructions: &[String],
    ) -> Result<Value, ProviderError> {
        let config = config::thread_config(&self.setup.mcp_servers, &self.setup.env)
            .map_err(ProviderError::Prepare)?;
        let mut params = json!({
            "cwd": self.setup.cwd,
            "approvalPolicy": config::approval_policy(mode),
            "sandbox": config::sandbox_mode(mode, settings),
            "config": config,
        });
        if let Some(text) = self.instructions(turn_instructions) {
            params["developerInstructions"] = Value::String(text);
        }
        if let Some(model) = &settings.model {
            params["model"] = Value::String(model.clone());
        }
        Ok(params)
    }

    /// The thread started when the session opened, if it is on the running server.
    async fn adopt_early(&mut self, conn: &Conn, transcript: &mut Transcript) -> bool {
        let Some(handle) = self.early.as_mut() else {
            return false;
        };
        // Awaited by reference: a cancel here leaves the start to finish for the next turn.
        let early = handle.await.ok().flatten();
        self.early = None;
        let Some(early) = early.filter(|e| e.generation == conn.generation) else {
            return false;
        };
        transcript.message(true, &early.request);
        transcript.message(false, &early.result);
        if let Some(model) = early.result.pointer("/result/model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        self.known_thread = Some(early.id.clone());
        self.thread = Some(Thread {
            id: early.id,
            generation: early.generation,
            rx: early.rx,
        });
        true
    }

    /// The thread on the running server: started, or resumed when the server is newer than
    /// the thread.
    async fn thread(
        &mut self,
        conn: &Conn,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        transcript: &mut Transcript,
    ) -> Result<Found, ProviderError> {
        if self
            .thread
            .as_ref()
            .is_some_and(|t| t.generation == conn.generation)
        {
            return Ok(Found::Continued);
        }
        if self.thread.is_none() && self.known_thread.is_none() && self.adopt_early(conn, transcript).await {
            return Ok(Found::Early);
        }
        if let Some(old) = self.thread.take() {
            self.known_thread = Some(old.id);
        }
        let params = self.thread_params(turn.mode, &turn.settings, &turn.developer_instructions)?;
        let result = match self.known_thread.clone() {
            Some(id) => {
                let mut resume = params.clone();
                resume["threadId"] = Value::String(id.clone());
                resume["excludeTurns"] = Value::Bool(true);
                match call(&conn.rpc, transcript, "thread/resume", resume).await {
                    Ok(result) => {
                        tracing::info!(session = %self.setup.session_id, thread = %id, "codex thread resumed");
                        result
                    }
                    Err(RpcFailure::Gone(gone)) => return Err(self.server.gone_error(&gone)),
                    Err(failure) => {
                        tracing::warn!(thread = %id, error = %failure, "resuming the codex thread failed; starting a new one");
                        notify(
                            sink,
                            self.setup.client_shows_notices,
                            &format!(
                                "Codex could not resume this conversation ({failure}); it continues in a new thread without the earlier turns."
                            ),
                        );
                        call(&conn.rpc, transcript, "thread/start", params)
                            .await
                            .map_err(|f| self.server.failed(&f))?
                    }
                }
            }
            None => call(&conn.rpc, transcript, "thread/start", params)
                .await
                .map_err(|f| self.server.failed(&f))?,
        };
        let id = result
            .pointer("/thread/id")
            .and_then(Value::as_str)
            .ok_or_else(|| ProviderError::TurnFailed {
                message: "codex app-server started a thread without an id".into(),
            })?
            .to_owned();
        if let Some(model) = result.get("model").and_then(Value::as_str) {
            self.model = Some(model.to_owned());
        }
        let (tx, rx) = mpsc::unbounded_channel();
        conn.rpc.subscribe(&id, tx);
        self.known_thread = Some(id.clone());
        self.thread = Some(Thread {
            id,
            generation: conn.generation,
            rx,
        });
        Ok(Found::Started)
    }

    /// The developer instructions of the session and of this turn from plugins, after the
    /// user's own.
    fn instructions(&self, turn: &[String]) -> Option<String> {
        let added: Vec<String> = self
            .setup
            .developer_instructions
            .iter()
            .chain(turn)
            .cloned()
            .collect();
        if added.is_empty() {
            return None;
        }
        let home = instructions::codex_home(|k| std::env::var(k).ok());
        let users = instructions::users_own(&self.server.options().overrides, home.as_deref());
        instructions::merged(users.as_deref(), &added)
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
        let slash = commands::parse(&turn.prompt.text);
        match &slash {
            Some(Slash::Status) => {
                let text = self.status(&turn);
                sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    ContentBlock::from(text),
                )));
                return Ok(TurnOutcome {
                    stop_reason: StopReason::EndTurn,
                    usage: None,
                });
            }
            Some(Slash::Init) => commands::INIT_PROMPT.clone_into(&mut turn.prompt.text),
            _ => {}
        }
        self.check(&turn)?;
        if !turn.env.is_empty() {
            tracing::debug!("per-turn environment from plugins is not supported on app-server; ignored");
        }
        let cancelled = || TurnOutcome {
            stop_reason: StopReason::Cancelled,
            usage: None,
        };
        let mut transcript = Transcript::open(
            self.server.options().transcript_dir.as_deref(),
            &self.setup.session_id,
            self.turns,
            self.secrets.clone(),
        );
        let conn = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(cancelled()),
            conn = self.server.connect() => conn?,
        };
        transcript.start_app_server(
            self.known_thread.as_deref(),
            &self.setup.cwd,
            turn.prompt.text.len(),
            conn.generation,
        );
        let found = tokio::select! {
            biased;
            () = cancel.cancelled() => return Ok(cancelled()),
            started = self.thread(&conn, &turn, sink, &mut transcript) => started?,
        };
        let images = ImageFiles::write(&turn.prompt.images)?;
        let decoder = AppDecoder::new(self.decoder_options());
        let Some(thread) = self.thread.as_mut() else {
            return Err(ProviderError::Prepare("no codex thread".into()));
        };
        let thread_id = thread.id.clone();
        // Stale messages of an earlier turn (after an interrupt) are of no use now.
        while let Ok(stale) = thread.rx.try_recv() {
            conn.rpc.took(&stale);
        }
        conn.rpc.set_active(&thread_id, true);
        inject_instructions(&conn.rpc, &mut transcript, &thread_id, found, &turn).await;
        let (method, params) = start_request(slash, &thread_id, &turn, &self.setup.cwd, images.paths());
        let start_totals = self.totals;
        let mut run = TurnRun {
            rpc: &conn.rpc,
            marker: &conn.marker,
            thread_id: &thread_id,
            turn_id: None,
            decoder,
            totals: None,
            title: None,
            out: Vec::new(),
            waiting: Vec::new(),
            transcript,
            usage: None,
        };
        let rx = &mut thread.rx;
        let started = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            started = call(&conn.rpc, &mut run.transcript, method, params) => Some(started),
        };
        let end = match started {
            None => Ended::Cancelled,
            Some(Err(failure)) => return Err(self.server.failed(&failure)),
            Some(Ok(result)) => {
                run.turn_id = result
                    .pointer("/turn/id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                run.drive(rx, sink, &cancel, &turn.steer).await
            }
        };
        drop(images);
        conn.rpc.set_active(&thread_id, false);
        while let Ok(late) = rx.try_recv() {
            conn.rpc.took(&late);
        }
        self.conclude(run, &end, sink);
        self.outcome(end, &start_totals)
    }

    async fn shutdown(&mut self) {
        if let Some(thread) = self.thread.take()
            && let Some(conn) = self.server_conn()
        {
            conn.rpc.unsubscribe(&thread.id);
        }
    }

    fn thread_id(&self) -> Option<String> {
        self.known_thread.clone()
    }
}

/// A thread started now got this turn's instructions with it; one started early gets them
/// now, and a continued one gets the plugins' news, as developer messages of its history.
async fn inject_instructions(
    rpc: &Rpc,
    transcript: &mut Transcript,
    thread_id: &str,
    found: Found,
    turn: &TurnRequest,
) {
    let notes = match found {
        Found::Started => return,
        Found::Early => &turn.developer_instructions[..],
        Found::Continued => &turn.notes[..],
    };
    if notes.is_empty() {
        return;
    }
    let params = json!({ "threadId": thread_id, "items": turn_input::developer_items(notes) });
    if let Err(e) = call(rpc, transcript, "thread/inject_items", params).await {
        tracing::warn!(error = %e, "adding the plugins' notes to the thread failed");
    }
}

/// What a turn taught the session about its thread.
struct Learned {
    usage: Option<Value>,
    totals: Option<Totals>,
    title: Option<String>,
    unknown: std::collections::BTreeMap<String, u64>,
}

/// The request that starts the turn: `turn/start`, or what a slash command maps to.
fn start_request(
    slash: Option<Slash>,
    thread_id: &str,
    turn: &TurnRequest,
    cwd: &std::path::Path,
    images: &[std::path::PathBuf],
) -> (&'static str, Value) {
    match slash {
        Some(Slash::Review(instructions)) => {
            let target = match instructions {
                Some(text) => json!({ "type": "custom", "instructions": text }),
                None => json!({ "type": "uncommittedChanges" }),
            };
            ("review/start", json!({ "threadId": thread_id, "target": target }))
        }
        Some(Slash::Compact) => ("thread/compact/start", json!({ "threadId": thread_id })),
        _ => {
            let mut params = json!({
                "threadId": thread_id,
                "input": turn_input::user_input(&turn.prompt.text, images),
                "approvalPolicy": config::approval_policy(turn.mode),
                "sandboxPolicy": config::sandbox_policy(turn.mode, &turn.settings),
                "cwd": cwd,
            });
            if let Some(model) = &turn.settings.model {
                params["model"] = Value::String(model.clone());
            }
            if let Some(effort) = &turn.settings.reasoning_effort {
                params["effort"] = Value::String(effort.clone());
            }
            ("turn/start", params)
        }
    }
}

impl AppSession {
    fn decoder_options(&self) -> AppDecoderOptions {
        AppDecoderOptions {
            cwd: self.setup.cwd.clone(),
            notices: self.setup.client_shows_notices,
            max_output_bytes: self.server.options().max_output_bytes,
            // Codex numbers items per thread: ids stay unique across turns with a prefix.
            id_prefix: format!("t{}-", self.turns),
        }
    }

    /// `/status`, answered without Codex.
    fn status(&self, turn: &TurnRequest) -> String {
        let rate_limits = self.server.live().and_then(|c| c.rpc.rate_limits());
        commands::Status {
            model: turn.settings.model.as_deref().or(self.model.as_deref()),
            mode: turn.mode.id(),
            thread: self.known_thread.as_deref(),
            usage: self.usage.as_ref(),
            rate_limits: rate_limits.as_ref(),
        }
        .render()
    }

    /// What must hold before a turn is sent: a prompt Codex accepts, a workspace that exists
    /// (the shared server runs elsewhere, so a deleted one shows only here).
    fn check(&self, turn: &TurnRequest) -> Result<(), ProviderError> {
        let chars = turn.prompt.text.chars().count();
        if chars > MAX_PROMPT_CHARS {
            return Err(ProviderError::Prepare(format!(
                "the prompt has {chars} characters; Codex accepts at most {MAX_PROMPT_CHARS}"
            )));
        }
        match std::fs::metadata(&self.setup.cwd) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(ProviderError::WorkDirGone {
                cwd: self.setup.cwd.clone(),
                source: std::io::Error::other("it is no longer a directory"),
            }),
            Err(source) => Err(ProviderError::WorkDirGone {
                cwd: self.setup.cwd.clone(),
                source,
            }),
        }
    }

    /// The turn's stream ended: its transcript is closed and what it taught is kept.
    fn conclude(&mut self, mut run: TurnRun<'_>, end: &Ended, sink: &dyn SessionSink) {
        if matches!(end, Ended::Cancelled) {
            run.transcript.cancelled();
        } else {
            run.transcript.end();
        }
        let learned = Learned {
            usage: run.usage.take(),
            totals: run.totals,
            title: run.title.take(),
            unknown: run.decoder.unknown_counts(),
        };
        self.absorb(learned, sink);
    }

    fn absorb(&mut self, learned: Learned, sink: &dyn SessionSink) {
        if learned.usage.is_some() {
            self.usage = learned.usage;
        }
        if let Some(totals) = learned.totals {
            self.totals = totals;
        }
        if let Some(title) = learned.title.filter(|t| self.title.as_ref() != Some(t)) {
            sink.update(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new().title(title.clone()),
            ));
            self.title = Some(title);
        }
        if !learned.unknown.is_empty() {
            tracing::info!(unknown = ?learned.unknown, "codex app-server sent messages acplb does not know; ignored");
        }
    }

    /// How the turn ended, as the runtime wants it.
    fn outcome(&mut self, end: Ended, start_totals: &Totals) -> Result<TurnOutcome, ProviderError> {
        let cancelled = TurnOutcome {
            stop_reason: StopReason::Cancelled,
            usage: None,
        };
        match end {
            Ended::Turn(TurnEnd::Completed) => Ok(TurnOutcome {
                stop_reason: StopReason::EndTurn,
                usage: Some(turn_delta(start_totals, &self.totals)),
            }),
            Ended::Turn(TurnEnd::Interrupted) | Ended::Cancelled => Ok(cancelled),
            Ended::Turn(TurnEnd::Failed {
                message,
                auth_required: true,
            }) => Err(ProviderError::AuthRequired {
                message: format!(
                    "{} (run `codex login`, or set the provider's API key)",
                    self.secrets.redact_known(&message)
                ),
            }),
            Ended::Turn(TurnEnd::Failed { message, .. }) => Err(ProviderError::TurnFailed {
                message: self.secrets.redact_known(&message).into_owned(),
            }),
            Ended::Gone(gone) => {
                // The next turn resumes the thread on a new server.
                self.thread = None;
                Err(self.server.gone_error(&gone))
            }
        }
    }

    fn server_conn(&self) -> Option<Conn> {
        self.server.live()
    }
}

/// How a turn's stream ended.
enum Ended {
    Turn(TurnEnd),
    Cancelled,
    Gone(Gone),
}

/// One running turn: the thread's messages in, updates and answers out.
struct TurnRun<'a> {
    rpc: &'a Rpc,
    /// The server's process marker: its commands for this thread are swept on cancel.
    marker: &'a str,
    thread_id: &'a str,
    turn_id: Option<String>,
    decoder: AppDecoder,
    totals: Option<Totals>,
    title: Option<String>,
    out: Vec<SessionUpdate>,
    /// Requests waiting on the editor: their id and the answer that cancels them.
    waiting: Vec<(Value, Value)>,
    transcript: Transcript,
    /// The last `thread/tokenUsage/updated` params.
    usage: Option<Value>,
}

type PendingAsk<'s> = futures::future::LocalBoxFuture<'s, (Value, Ask, PermissionAnswer)>;

impl TurnRun<'_> {
    async fn drive(
        &mut self,
        rx: &mut mpsc::UnboundedReceiver<Incoming>,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
        steer: &acplb_core::provider::SteerInbox,
    ) -> Ended {
        let mut asks: FuturesUnordered<PendingAsk<'_>> = FuturesUnordered::new();
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => return self.interrupt(rx, sink, asks).await,
                // Cancel-safe: FuturesUnordered keeps the other asks.
                Some((id, ask, answer)) = asks.next(), if !asks.is_empty() => {
                    let result = match &answer {
                        PermissionAnswer::Selected(option) => ask.answer(option),
                        PermissionAnswer::Cancelled => ask.cancelled(),
                        PermissionAnswer::Unanswered(why) => {
                            tracing::info!(reason = %why, "permission not answered; treated as a rejection");
                            ask.rejected()
                        }
                    };
                    self.waiting.retain(|(waiting, _)| *waiting != id);
                    self.respond(&id, result);
                }
                // Cancel-safe: a steered prompt not taken stays in the channel.
                input = steer.next() => self.steer(&input.text).await,
                msg = rx.recv() => {
                    let Some(msg) = msg else {
                        return Ended::Gone(Gone { status: "the connection was closed".into(), stderr_tail: String::new() });
                    };
                    self.rpc.took(&msg);
                    self.record(&msg);
                    match msg {
                        Incoming::Gone(gone) => {
                            self.close_open("Codex exited before this finished.", sink);
                            return Ended::Gone(gone);
                        }
                        Incoming::Notification { method, params } => {
                            if let Some(end) = self.on_notification(&method, &params) {
                                self.flush(sink);
                                return Ended::Turn(end);
                            }
                        }
                        Incoming::Request { id, method, params } => {
                            if let Some(ask) = Ask::from_request(&method, &params, &self.decoder) {
                                let question = acplb_core::provider::PermissionAsk {
                                    tool_call: ask.tool_call.clone(),
                                    options: ask.options.clone(),
                                };
                                self.waiting.push((id.clone(), ask.cancelled()));
                                asks.push(Box::pin(async move {
                                    let answer = sink.request_permission(question).await;
                                    (id, ask, answer)
                                }));
                            } else if method == "item/tool/requestUserInput" {
                                let result = answer_user_input(&params, &mut self.out);
                                self.respond(&id, result);
                            } else if method == "mcpServer/elicitation/request" {
                                // An MCP server asking the user for data: acplb has no form to
                                // show, so the answer is a decline the server can handle.
                                tracing::info!("an MCP server asked for input acplb cannot show; declined");
                                self.respond(&id, json!({ "action": "decline", "content": null, "_meta": null }));
                            } else {
                                tracing::warn!(%method, "codex app-server asked something acplb cannot answer; declined");
                                self.respond_error(&id, -32601, "acplb cannot answer this request");
                            }
                        }
                    }
                    self.flush(sink);
                    // The editor is behind: stop taking messages until it catches up.
                    sink.ready().await;
                }
            }
        }
    }

    /// Returns how the turn ended once it has.
    fn on_notification(&mut self, method: &str, params: &Value) -> Option<TurnEnd> {
        // A message of another turn of this thread (an earlier, interrupted one) is not ours.
        if let (Some(ours), Some(theirs)) = (
            self.turn_id.as_deref(),
            params.get("turnId").and_then(Value::as_str),
        ) && ours != theirs
        {
            return None;
        }
        if method == "thread/tokenUsage/updated" {
            self.usage = Some(params.clone());
        }
        match self.decoder.notification(method, params, &mut self.out)? {
            AppSignal::TurnStarted { turn_id } => {
                self.turn_id.get_or_insert(turn_id);
                None
            }
            AppSignal::TurnCompleted { turn_id, end } => {
                if self.turn_id.as_deref().is_some_and(|t| t != turn_id) {
                    return None;
                }
                Some(end)
            }
            AppSignal::Totals(totals) => {
                self.totals = Some(totals);
                None
            }
            AppSignal::ThreadName(name) => {
                self.title = Some(name);
                None
            }
        }
    }

    fn respond(&mut self, id: &Value, result: Value) {
        self.transcript
            .message(true, &json!({ "id": id, "result": result }));
        self.rpc.respond(id, result);
    }

    fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.transcript.message(
            true,
            &json!({ "id": id, "error": { "code": code, "message": message } }),
        );
        self.rpc.respond_error(id, code, message);
    }

    fn record(&mut self, msg: &Incoming) {
        let value = match msg {
            Incoming::Notification { method, params } => json!({ "method": method, "params": params }),
            Incoming::Request { id, method, params } => {
                json!({ "id": id, "method": method, "params": params })
            }
            Incoming::Gone(gone) => json!({ "gone": { "status": gone.status } }),
        };
        self.transcript.message(false, &value);
    }

    async fn steer(&mut self, text: &str) {
        let Some(turn_id) = self.turn_id.clone() else {
            return;
        };
        let params = json!({
            "threadId": self.thread_id,
            "input": turn_input::user_input(text, &[]),
            "expectedTurnId": turn_id,
        });
        if let Err(e) = call(self.rpc, &mut self.transcript, "turn/steer", params).await {
            tracing::warn!(error = %e, "steering the running turn failed");
        }
    }

    /// Cancel: pending asks are answered "cancel", the turn is interrupted, and its end awaited
    /// (briefly) so its last updates are not lost; open tool calls close as cancelled.
    async fn interrupt(
        &mut self,
        rx: &mut mpsc::UnboundedReceiver<Incoming>,
        sink: &dyn SessionSink,
        asks: FuturesUnordered<PendingAsk<'_>>,
    ) -> Ended {
        // The pending permission prompts are dropped (the editor cancels its own on
        // session/cancel); Codex hears "cancel" for each.
        drop(asks);
        for (id, cancelled) in std::mem::take(&mut self.waiting) {
            self.respond(&id, cancelled);
        }
        let rpc = self.rpc;
        if let Some(turn_id) = self.turn_id.clone() {
            let params = json!({ "threadId": self.thread_id, "turnId": turn_id });
            let wait_end = async {
                let _ignored = call(rpc, &mut self.transcript, "turn/interrupt", params).await;
                while let Some(msg) = rx.recv().await {
                    rpc.took(&msg);
                    self.record(&msg);
                    match msg {
                        Incoming::Notification { method, params } => {
                            if self.on_notification(&method, &params).is_some() {
                                return;
                            }
                        }
                        Incoming::Request { id, method, params } => {
                            // Asked while stopping: refused the way a rejection would be.
                            match Ask::from_request(&method, &params, &self.decoder) {
                                Some(ask) => self.respond(&id, ask.cancelled()),
                                None => self.respond_error(&id, -32603, "the turn was cancelled"),
                            }
                        }
                        Incoming::Gone(_) => return,
                    }
                }
            };
            if tokio::time::timeout(INTERRUPT_WAIT, wait_end).await.is_err() {
                tracing::warn!("codex did not confirm the interrupt in time");
            }
        }
        // Codex leaves a running command running after an interrupt; it must not outlive the
        // cancel. Its processes carry the server's marker and the thread's id; the server and
        // other sessions' commands do not match both.
        let entry = format!("CODEX_THREAD_ID={}", self.thread_id);
        let killed = acplb_core::transport::kill_marked_with(self.marker.to_owned(), entry).await;
        if killed > 0 {
            tracing::debug!(killed, "stopped the cancelled turn's commands");
        }
        self.close_open("Cancelled before it finished.", sink);
        Ended::Cancelled
    }

    fn close_open(&mut self, why: &str, sink: &dyn SessionSink) {
        self.decoder
            .close_open_tool_calls_because(ToolCallStatus::Failed, Some(why), &mut self.out);
        self.flush(sink);
    }

    fn flush(&mut self, sink: &dyn SessionSink) {
        for update in self.out.drain(..) {
            sink.update(update);
        }
    }
}

/// A request of acplb's, written to the turn's transcript with its result.
async fn call(
    rpc: &Rpc,
    transcript: &mut Transcript,
    method: &str,
    params: Value,
) -> Result<Value, RpcFailure> {
    transcript.message(true, &json!({ "method": method, "params": params }));
    let result = rpc.request(method, params).await;
    let recorded = match &result {
        Ok(value) => json!({ "method": method, "result": value }),
        Err(RpcFailure::Error { code, message }) => {
            json!({ "method": method, "error": { "code": code, "message": message } })
        }
        Err(RpcFailure::Gone(gone)) => json!({ "method": method, "gone": { "status": gone.status } }),
    };
    transcript.message(false, &recorded);
    result
}

/// A notice to the user: a `notice` update where the client shows them, else a message.
fn notify(sink: &dyn SessionSink, notices: bool, text: &str) {
    let update = if notices {
        SessionUpdate::Notice(agent_client_protocol::v1::schema::Notice::new(
            agent_client_protocol::v1::schema::NoticeSeverity::Warning,
            text,
        ))
    } else {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n\n"))))
    };
    sink.update(update);
}
