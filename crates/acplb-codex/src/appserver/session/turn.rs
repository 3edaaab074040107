//! One running turn on app-server: the thread's messages in (decoded into updates), permission
//! asks raced against cancel (the requests themselves: `requests.rs`), and steering (the
//! interrupt that ends a cancelled turn: `interrupt.rs`).

use super::beside::OpenQuestions;
use super::forms::{Asker, PendingQuestion};
use super::{
    AppDecoder, AppSignal, Ask, CancellationToken, FuturesUnordered, Gone, Inbox, Incoming, PermissionAnswer,
    Rpc, RpcFailure, SessionSink, SessionUpdate, StreamExt, ToolCallStatus, Totals, Transcript, TurnEnd,
    Value, json, turn_input,
};
use crate::appserver::protocol::requests::TurnSteer;
use crate::appserver::protocol::{Request, methods};
use crate::appserver::subagents::Subagents;
use acplb_core::provider::ElicitAnswer;

/// How a turn's stream ended.
pub(super) enum Ended {
    Turn(TurnEnd),
    Cancelled,
    Gone(Gone),
}

/// One running turn: the thread's messages in, updates and answers out.
pub(super) struct TurnRun<'a> {
    pub(super) rpc: &'a std::rc::Rc<Rpc>,
    /// The server's process marker: its commands for this thread are swept on cancel.
    pub(super) marker: &'a str,
    pub(super) thread_id: &'a str,
    pub(super) turn_id: Option<String>,
    pub(super) decoder: AppDecoder,
    pub(super) totals: Option<Totals>,
    pub(super) title: Option<String>,
    pub(super) out: Vec<SessionUpdate>,
    /// Requests waiting on the editor: their id and the answer that cancels them.
    pub(super) waiting: Vec<(Value, Value)>,
    pub(super) transcript: Transcript,
    /// The last `thread/tokenUsage/updated` params.
    pub(super) usage: Option<Value>,
    /// The subagents the turn spawned, shown as tool calls.
    pub(super) subagents: Subagents,
    /// Whether the client shows `notice` updates.
    pub(super) notices: bool,
    /// The commands earlier turns left running, whose news may come during this one.
    pub(super) background: super::background::Shared,
    /// The thread's goal as the editor last saw it (`goal.rs`).
    pub(super) goal: Option<crate::appserver::goals::Goal>,
    /// When the prompt stops waiting for the turn Codex starts for its goal (set: none runs).
    pub(super) next_turn_by: Option<tokio::time::Instant>,
    /// The turn is being interrupted: no next turn is awaited.
    pub(super) stopping: bool,
    /// How the turn ended, while its answer waits for its subagents (`children.rs`).
    pub(super) held_end: Option<TurnEnd>,
    /// When that wait gives up.
    pub(super) children_by: Option<tokio::time::Instant>,
    /// How long that wait lasts.
    pub(super) children_wait: std::time::Duration,
    /// Asks of subagents waiting on the editor: the request's id, the child's thread, and
    /// what stops the wait for the editor's answer (a cancel of the child's work).
    pub(super) child_asks: Vec<(Value, String, futures::future::AbortHandle)>,
    /// Where what children that go on after the turn ask goes (the session actor, ADR 0059).
    pub(super) editor: super::background::Editor,
}

/// Permission asks one turn lets wait for the editor's answer; past them the turn takes no
/// more of Codex's messages until one is answered (Codex asks one at a time; only a flood
/// gets here), so asks the editor leaves unanswered cannot pile up in memory.
const OPEN_ASKS: usize = 64;

pub(super) type PendingAsk<'s> = futures::future::LocalBoxFuture<'s, (Value, Ask, PermissionAnswer)>;

impl TurnRun<'_> {
    /// Runs the turn to its end; its async questions still open then are withdrawn.
    pub(super) async fn drive(
        &mut self,
        inbox: &mut Inbox,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
        steer: &acplb_core::provider::SteerInbox,
    ) -> Ended {
        let mut open = OpenQuestions::default();
        let end = self.drive_with(inbox, sink, cancel, steer, &mut open).await;
        open.close(self.notices);
        // What is still asked when the turn ended (a subagent's ask, its parent done) is
        // answered "cancel": nothing Codex asked is left without an answer.
        for (id, cancelled) in std::mem::take(&mut self.waiting) {
            self.respond(&id, cancelled);
        }
        end
    }

    async fn drive_with(
        &mut self,
        inbox: &mut Inbox,
        sink: &dyn SessionSink,
        cancel: &CancellationToken,
        steer: &acplb_core::provider::SteerInbox,
        open: &mut OpenQuestions,
    ) -> Ended {
        let mut asks: FuturesUnordered<PendingAsk<'_>> = FuturesUnordered::new();
        let mut questions: FuturesUnordered<PendingQuestion<'_>> = FuturesUnordered::new();
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    // The open forms are dropped; Codex hears "no answer" for each (`waiting`).
                    drop(questions);
                    open.withdraw();
                    return self.interrupt(inbox, sink, asks).await;
                }
                // Cancel-safe, as below.
                (asked, answer) = open.next(), if !open.is_empty() => {
                    self.answer_beside(&asked, &answer, sink).await;
                }
                // Cancel-safe, as below.
                Some((id, params, asker, answer)) = questions.next(), if !questions.is_empty() => {
                    self.waiting.retain(|(waiting, _)| *waiting != id);
                    self.respond(&id, asker.result(&params, &answer));
                    match answer {
                        // The user dismissed Codex's question: the turn stops, as when Codex's
                        // own question is dismissed.
                        ElicitAnswer::Cancelled if asker == Asker::Codex => {
                            drop(questions);
                            return self.interrupt(inbox, sink, asks).await;
                        }
                        ElicitAnswer::Unanswered(why) => {
                            tracing::info!(reason = %why, "a question went unanswered; Codex goes on without an answer");
                        }
                        ElicitAnswer::Accepted(_) | ElicitAnswer::Declined | ElicitAnswer::Cancelled => {}
                    }
                }
                // Cancel-safe: FuturesUnordered keeps the other asks.
                Some((id, ask, answer)) = asks.next(), if !asks.is_empty() => {
                    self.permission_answered(&id, &ask, &answer, sink);
                }
                // Cancel-safe: an answer not taken stays with its question. What a child that
                // goes on after the turn asked, now or before this turn took it up
                // (`subagents/asked.rs`).
                (open, answer) = self.subagents.answered(&mut self.out) => {
                    self.respond(&open.id, open.ask.result(&answer));
                    self.flush(sink);
                }
                // Cancel-safe: a sleep holds no state.
                () = super::goal::until(self.next_turn_by), if self.next_turn_by.is_some() => {
                    self.flush(sink);
                    return Ended::Turn(TurnEnd::Completed);
                }
                // Cancel-safe, as above.
                () = super::goal::until(self.children_by), if self.children_by.is_some() => {
                    drop(questions);
                    return self.children_outlasted(asks, sink).await;
                }
                // Cancel-safe, as below.
                child = steer.next_child_cancel() => {
                    self.cancel_child(&child);
                    self.flush(sink);
                }
                // Cancel-safe: a steered prompt not taken stays in the channel. Not while the
                // answer waits for subagents: the turn is over, the prompt gets one of its own.
                input = steer.next(), if self.held_end.is_none() => {
                    self.steered(&input.text).await;
                    self.flush(sink);
                }
                // Cancel-safe, as above; not polled while too many asks wait for the editor.
                msg = inbox.recv(), if asks.len() + questions.len() < OPEN_ASKS => {
                    let Some(msg) = msg else {
                        if let Some(end) = self.held_end.take() {
                            return Ended::Turn(end);
                        }
                        return Ended::Gone(Gone::closed());
                    };
                    self.record(&msg);
                    match msg {
                        Incoming::Gone(gone) => {
                            let why = match gone.unanswered {
                                Some(_) => "Codex stopped answering before this finished.",
                                None => "Codex exited before this finished.",
                            };
                            self.close_open(why, sink);
                            // A turn that ended and waited for its subagents keeps its end.
                            if let Some(end) = self.held_end.take() {
                                return Ended::Turn(end);
                            }
                            return Ended::Gone(gone);
                        }
                        Incoming::Notification { method, params } => {
                            if let Some(end) = self.on_notification(&method, &params) {
                                self.flush(sink);
                                return Ended::Turn(end);
                            }
                            // The turn is over while its answer waits for subagents: a prompt
                            // sent now gets a turn of its own.
                            if self.held_end.is_some() {
                                steer.close();
                            }
                            if let Some(asked) = self.asked_beside(&method, &params) {
                                // The message's text first, then its form.
                                self.flush(sink);
                                open.ask(asked, sink, self.decoder.options().air.is_some());
                            }
                        }
                        Incoming::Request { id, method, params } => {
                            self.on_request(id, &method, params, sink, &mut asks, &mut questions);
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
    pub(super) fn on_notification(&mut self, method: &str, params: &Value) -> Option<TurnEnd> {
        // Codex's error words, a child's too, are cleared of secrets before anyone reads them.
        let redacted = redact_error(self.rpc, method, params);
        let params = redacted.as_ref().unwrap_or(params);
        if self.subagents.take(method, params, &mut self.out) {
            return self.children_done();
        }
        // Output or end of a command an earlier turn left running: that turn's call shows it.
        if self.background.borrow_mut().take(method, params, &mut self.out) {
            return None;
        }
        // The thread's goal, whichever turn the news names.
        if self.take_goal(method, params) {
            return None;
        }
        // A message of another turn of this thread (an earlier, interrupted one) is not ours.
        if let (Some(ours), Some(theirs)) = (
            self.turn_id.as_deref(),
            params.get("turnId").and_then(Value::as_str),
        ) && ours != theirs
        {
            return None;
        }
        if method == methods::TOKEN_USAGE_UPDATED {
            self.usage = Some(params.clone());
        }
        match self.decoder.notification(method, params, &mut self.out)? {
            AppSignal::TurnStarted { turn_id } => {
                self.turn_id.get_or_insert(turn_id);
                self.next_turn_by = None;
                None
            }
            AppSignal::TurnCompleted { turn_id, end } => {
                if self.turn_id.as_deref().is_some_and(|t| t != turn_id) {
                    return None;
                }
                // Its goal still active, Codex goes on with a turn of its own: the prompt's.
                if end == TurnEnd::Completed && !self.stopping && self.goes_on() {
                    return None;
                }
                if self.waits_for_children(&end) {
                    return None;
                }
                self.subagents
                    .turn_ended(matches!(end, TurnEnd::Interrupted), &mut self.out);
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

    pub(super) fn respond(&mut self, id: &Value, result: Value) {
        self.transcript
            .record(true, || json!({ "id": id, "result": result }));
        self.rpc.respond(id, result);
    }

    pub(super) fn respond_error(&mut self, id: &Value, code: i64, message: &str) {
        self.transcript.record(
            true,
            || json!({ "id": id, "error": { "code": code, "message": message } }),
        );
        self.rpc.respond_error(id, code, message);
    }

    pub(super) fn record(&mut self, msg: &Incoming) {
        self.transcript.record(false, || match msg {
            Incoming::Notification { method, params } => json!({ "method": method, "params": params }),
            Incoming::Request { id, method, params } => {
                json!({ "id": id, "method": method, "params": params })
            }
            Incoming::Gone(gone) => json!({ "gone": { "status": gone.status } }),
        });
    }

    /// Steers `text` into the running turn; whether Codex took it.
    pub(super) async fn steer(&mut self, text: &str) -> bool {
        let Some(turn_id) = self.turn_id.clone() else {
            return false;
        };
        let params = TurnSteer {
            thread_id: self.thread_id.to_owned(),
            input: turn_input::user_input(text, &[]),
            expected_turn_id: turn_id,
        };
        match call(self.rpc, &mut self.transcript, &params).await {
            Ok(_) => true,
            Err(e) => {
                tracing::warn!(error = %e, "steering the running turn failed");
                false
            }
        }
    }

    pub(super) fn close_open(&mut self, why: &str, sink: &dyn SessionSink) {
        self.decoder
            .close_open_tool_calls_because(ToolCallStatus::Failed, Some(why), &mut self.out);
        self.subagents.close_open(why, &mut self.out);
        self.flush(sink);
    }

    pub(super) fn flush(&mut self, sink: &dyn SessionSink) {
        for update in self.out.drain(..) {
            sink.update(update);
        }
    }
}

/// A request of acplb's, written to the turn's transcript with its result.
pub(super) async fn call<R: Request>(
    rpc: &Rpc,
    transcript: &mut Transcript,
    params: &R,
) -> Result<Value, RpcFailure> {
    let method = R::METHOD;
    transcript.record(true, || json!({ "method": method, "params": params }));
    let result = rpc.request(params).await;
    transcript.record(false, || match &result {
        Ok(value) => json!({ "method": method, "result": value }),
        Err(RpcFailure::Error { code, message }) => {
            json!({ "method": method, "error": { "code": code, "message": message } })
        }
        Err(RpcFailure::Gone(gone)) => json!({ "method": method, "gone": { "status": gone.status } }),
    });
    result
}

/// `params` of an `error` or a failed `turn/completed` with Codex's words cleared of the served
/// sessions' secrets and of anything shaped like a key, as they reach the client (a warning, a
/// failure's message or typed title); `None` for any other message.
pub(super) fn redact_error(rpc: &Rpc, method: &str, params: &Value) -> Option<Value> {
    let error = match method {
        methods::ERROR => "/error",
        methods::TURN_COMPLETED => "/turn/error",
        _ => return None,
    };
    params.pointer(error)?.as_object()?;
    let mut copy = params.clone();
    let error = copy.pointer_mut(error)?.as_object_mut()?;
    for field in ["message", "additionalDetails"] {
        if let Some(Value::String(text)) = error.get_mut(field) {
            *text = rpc.redact(text);
        }
    }
    Some(copy)
}
