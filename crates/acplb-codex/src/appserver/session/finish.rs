//! How a turn's end becomes the session's: instructions delivered to the thread, what the turn
//! taught (usage, totals, title), the request that starts a turn, and the outcome the runtime
//! gets.

use std::time::Duration;

use super::super::goals;
use super::super::protocol::requests::{
    ReviewStart, ThreadCompactStart, ThreadGoalSet, ThreadInjectItems, TurnStart,
};
use super::super::rpc::{Gone, RpcFailure};
use super::super::{account, mcp_login};
use super::turn::{Ended, TurnRun, call};
use super::{
    AppSession, CancellationToken, Conn, ContentBlock, ContentChunk, DecoderOptions, Found, ProviderError,
    Rpc, SessionInfoUpdate, SessionSink, SessionUpdate, Slash, StopReason, Totals, Transcript, TurnEnd,
    TurnOutcome, TurnRequest, Value, commands, config, json, turn_input,
};
use crate::outcome::{Ending, cancelled, outcome};
use acplb_core::provider::{FailureKind, Incident};

/// How long `/status` waits for Codex to say who is signed in.
const ACCOUNT_WAIT: Duration = Duration::from_secs(5);

/// A thread started now got this turn's instructions with it; one started early gets them
/// now, and a continued one gets the plugins' news, as developer messages of its history.
pub(super) async fn inject_instructions(
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
    let params = ThreadInjectItems {
        thread_id: thread_id.to_owned(),
        items: turn_input::developer_items(notes),
    };
    if let Err(e) = call(rpc, transcript, &params).await {
        tracing::warn!(error = %e, "adding the plugins' notes to the thread failed");
    }
}

/// What a turn taught the session about its thread.
pub(super) struct Learned {
    pub(super) usage: Option<Value>,
    pub(super) totals: Option<Totals>,
    pub(super) title: Option<String>,
    pub(super) unknown: std::collections::BTreeMap<String, u64>,
}

/// The request that starts the turn: `turn/start`, or what a slash command maps to.
pub(super) enum Start {
    Turn(Box<TurnStart>),
    Review(ReviewStart),
    Compact(ThreadCompactStart),
    /// `/goal <objective>` or `/goal resume`: Codex starts the goal's turn on its own.
    Goal(ThreadGoalSet),
}

impl Start {
    /// Sends it, recorded in the turn's transcript.
    pub(super) async fn send(&self, rpc: &Rpc, transcript: &mut Transcript) -> Result<Value, RpcFailure> {
        match self {
            Self::Turn(params) => call(rpc, transcript, params.as_ref()).await,
            Self::Review(params) => call(rpc, transcript, params).await,
            Self::Compact(params) => call(rpc, transcript, params).await,
            Self::Goal(params) => call(rpc, transcript, params).await,
        }
    }
}

/// The request that starts the turn on thread `thread_id`.
pub(super) fn start_request(
    slash: Option<Slash>,
    thread_id: &str,
    turn: &TurnRequest,
    cwd: &std::path::Path,
    images: &[std::path::PathBuf],
    writable: &[std::path::PathBuf],
    collaboration_mode: Option<Value>,
) -> Start {
    let thread_id = thread_id.to_owned();
    let profile = crate::profiles::of(&turn.settings);
    match slash {
        Some(Slash::Review(instructions)) => {
            let target = match instructions {
                Some(text) => json!({ "type": "custom", "instructions": text }),
                None => json!({ "type": "uncommittedChanges" }),
            };
            Start::Review(ReviewStart { thread_id, target })
        }
        Some(Slash::Compact) => Start::Compact(ThreadCompactStart { thread_id }),
        Some(Slash::Goal(goals::Ask::Set(objective))) => {
            Start::Goal(goals::set_request(&thread_id, Some(objective), "active"))
        }
        Some(Slash::Goal(goals::Ask::Resume)) => Start::Goal(goals::set_request(&thread_id, None, "active")),
        _ => Start::Turn(Box::new(TurnStart {
            thread_id,
            input: turn_input::user_input(&turn.prompt.text, images),
            approval_policy: config::approval_policy(turn.mode),
            sandbox_policy: profile
                .is_none()
                .then(|| config::sandbox_policy(turn.mode, &turn.settings, writable)),
            runtime_workspace_roots: profile.is_some().then(|| {
                std::iter::once(cwd.to_path_buf())
                    .chain(writable.iter().cloned())
                    .collect()
            }),
            permissions: profile.map(str::to_owned),
            cwd: cwd.to_path_buf(),
            model: turn.settings.model.clone(),
            effort: turn.settings.reasoning_effort.clone(),
            collaboration_mode,
        })),
    }
}

impl AppSession {
    /// `turn/start.collaborationMode` for this turn (Codex's plan mode, or its default mode
    /// again after a turn in plan mode); a `/review`, `/compact` or `/goal` starts no turn of its own.
    pub(super) fn collaboration(&mut self, slash: Option<&Slash>, turn: &TurnRequest) -> Option<Value> {
        if matches!(slash, Some(Slash::Review(_) | Slash::Compact | Slash::Goal(_))) {
            return None;
        }
        let model = turn.settings.model.as_deref().or(self.model.as_deref());
        let mode =
            crate::appserver::plan::collaboration_mode(turn.mode, self.planning, model, &turn.settings);
        self.planning = turn.mode == acplb_core::permission::Mode::Plan;
        mode
    }

    pub(super) fn decoder_options(&self) -> DecoderOptions {
        DecoderOptions {
            cwd: self.setup.cwd.clone(),
            notices: self.setup.client_shows_notices,
            max_output_bytes: self.server.options().max_output_bytes,
            // Codex numbers items per thread: ids stay unique across turns with a prefix.
            id_prefix: format!("t{}-", self.turns),
            terminal: self.setup.client_terminal_output,
            compaction: self.setup.client_compaction,
            plan_updates: self.setup.client_plan_updates,
            air: self.setup.client_air.clone(),
        }
    }

    /// `/status`, answered by acplb (Codex is only asked who is signed in).
    pub(super) async fn status(&self, turn: &TurnRequest) -> String {
        let account = match tokio::time::timeout(ACCOUNT_WAIT, account::read(&self.server)).await {
            Ok(Ok(account)) => account.describe(),
            Ok(Err(why)) => format!("unknown ({why})"),
            Err(_) => format!("unknown (Codex did not say within {ACCOUNT_WAIT:?})"),
        };
        let rate_limits = self.server.live().and_then(|c| c.rpc.rate_limits());
        commands::Status {
            account: Some(&account),
            model: turn.settings.model.as_deref().or(self.model.as_deref()),
            mode: turn.mode.id(),
            thread: self.known_thread.as_deref(),
            usage: self.usage.as_ref(),
            rate_limits: rate_limits.as_ref(),
        }
        .render()
    }

    /// A command acplb answers itself (`/status`, `/mcp`, `/mcp login`, `/terminals`), with no turn of Codex's; `None` for
    /// everything else.
    pub(super) async fn answer_here(
        &mut self,
        slash: Option<&Slash>,
        turn: &TurnRequest,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
    ) -> Option<Result<TurnOutcome, ProviderError>> {
        let text = match slash? {
            Slash::Status => self.status(turn).await,
            Slash::Mcp { reload } => tokio::select! {
                biased;
                () = cancel.cancelled() => return Some(Ok(cancelled())),
                text = self.mcp_status(*reload) => match text {
                    Ok(text) => text,
                    Err(e) => return Some(Err(e)),
                },
            },
            Slash::Terminals(ask) => tokio::select! {
                biased;
                () = cancel.cancelled() => return Some(Ok(cancelled())),
                text = self.terminals(ask) => match text {
                    Ok(text) => text,
                    Err(e) => return Some(Err(e)),
                },
            },
            Slash::Goal(ask) if !ask.starts_work() => tokio::select! {
                biased;
                () = cancel.cancelled() => return Some(Ok(cancelled())),
                answer = self.goal_here(ask) => match answer {
                    Ok((text, update)) => {
                        sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                            ContentBlock::from(text),
                        )));
                        if let Some(update) = update {
                            sink.update(update);
                        }
                        return Some(Ok(TurnOutcome { stop_reason: StopReason::EndTurn, usage: None }));
                    }
                    Err(e) => return Some(Err(e)),
                },
            },
            Slash::McpLogin(server) => tokio::select! {
                biased;
                () = cancel.cancelled() => return Some(Ok(cancelled())),
                text = self.mcp_login(server, sink) => match text {
                    Ok(text) => text,
                    Err(e) => return Some(Err(e)),
                },
            },
            _ => return None,
        };
        sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(text),
        )));
        Some(Ok(TurnOutcome {
            stop_reason: StopReason::EndTurn,
            usage: None,
        }))
    }

    /// This session's thread, if it runs on `conn`'s server.
    pub(super) fn thread_on(&self, conn: &Conn) -> Option<String> {
        self.thread
            .as_ref()
            .filter(|t| t.generation == conn.generation)
            .map(|t| t.id.clone())
    }

    /// `/mcp login <server>`: the page to open goes to the editor at once; the answer says how
    /// the login ended (the caller stops waiting on a cancel).
    pub(super) async fn mcp_login(
        &self,
        server: &str,
        sink: &dyn SessionSink,
    ) -> Result<String, ProviderError> {
        if server.is_empty() {
            return Ok(mcp_login::USAGE.to_owned());
        }
        let conn = self.server.connect().await?;
        let (url, id) = match mcp_login::start(&conn.rpc, server, self.thread_on(&conn).as_deref()).await {
            Ok(started) => started,
            Err(why) => return Ok(format!("{why}\n")),
        };
        sink.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::from(mcp_login::open_page(server, &url)),
        )));
        Ok(mcp_login::finish(&conn.rpc, server, &id).await)
    }

    /// `/terminals …`, answered from the server for this session's thread (none when it
    /// does not run there: a new server has none of the old one's commands).
    pub(super) async fn terminals(
        &self,
        ask: &super::super::terminals::Ask,
    ) -> Result<String, ProviderError> {
        use super::super::terminals;
        if *ask == terminals::Ask::Usage {
            return Ok(terminals::USAGE.to_owned());
        }
        let conn = self.server.connect().await?;
        Ok(match self.thread_on(&conn) {
            Some(thread) => {
                let on = terminals::On {
                    rpc: &conn.rpc,
                    thread: &thread,
                    marker: &conn.marker,
                };
                terminals::report(on, ask).await
            }
            None => terminals::NO_THREAD.to_owned(),
        })
    }

    /// `/mcp [reload]`, answered from the server: the servers of this session's thread when it
    /// runs there, else those of Codex's configuration (the editor's join at the first turn).
    pub(super) async fn mcp_status(&self, reload: bool) -> Result<String, ProviderError> {
        let conn = self.server.connect().await?;
        let thread = self.thread_on(&conn);
        let mut text = super::super::mcp_status::report(&conn.rpc, thread.as_deref(), reload).await;
        if thread.is_none() {
            text.push_str(
                "\nThis session has not run a turn yet: these are the servers of Codex's configuration; the editor's join them with the first turn.\n",
            );
        }
        Ok(text)
    }

    /// The turn's stream ended: its transcript is closed and what it taught is kept.
    pub(super) fn conclude(
        &mut self,
        mut run: TurnRun<'_>,
        end: &Ended,
        sink: &dyn SessionSink,
    ) -> (FailureKind, Incident) {
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
        let failure = run.decoder.failure(run.turn_id.as_deref());
        // Its commands that run on are followed to their end.
        let mut out = Vec::new();
        self.background.borrow_mut().keep(run.decoder, &mut out);
        for update in out {
            sink.update(update);
        }
        self.absorb(learned, sink);
        failure
    }

    pub(super) fn absorb(&mut self, learned: Learned, sink: &dyn SessionSink) {
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
    pub(super) fn outcome(
        &mut self,
        end: Ended,
        start_totals: &Totals,
        failure: (FailureKind, Incident),
    ) -> Result<TurnOutcome, ProviderError> {
        let ending = match end {
            Ended::Turn(TurnEnd::Completed) => Ending::Completed {
                before: *start_totals,
                after: self.totals,
            },
            Ended::Turn(TurnEnd::Interrupted) | Ended::Cancelled => Ending::Cancelled,
            Ended::Turn(TurnEnd::Failed {
                message,
                auth_required,
            }) => Ending::Failed {
                message,
                auth_required,
                kind: failure.0,
                incident: Some(failure.1),
            },
            Ended::Gone(gone) => {
                // The next turn resumes the thread on a new server.
                self.thread = None;
                return Err(self.gone_error(&gone));
            }
        };
        outcome(ending, &self.secrets)
    }

    /// The error for a turn whose server died or stopped answering (its stderr was cleared of
    /// every served session's secrets as it was read).
    pub(super) fn gone_error(&self, gone: &Gone) -> ProviderError {
        self.server.gone_error(gone)
    }

    /// The error a failed request means for the turn.
    pub(super) fn failed(&self, failure: &RpcFailure) -> ProviderError {
        match failure {
            RpcFailure::Gone(gone) => self.gone_error(gone),
            RpcFailure::Error { .. } => self.server.failed(failure),
        }
    }

    pub(super) fn server_conn(&self) -> Option<Conn> {
        self.server.live()
    }
}
