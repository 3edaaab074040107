//! How the next queued prompt becomes a turn: a prompt the editor withdrew is skipped, queued
//! mail announced since the last turn joins it, the journal and registry hear of it, and the
//! turn runs the plugins' prompt hooks, then the provider, as one cancellable future.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, StopReason};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{Running, SessionActor, TurnEnd, TurnFuture};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::plugin::PromptContext;
use crate::provider::{SteerInbox, TurnOutcome, TurnRequest};
use crate::session::file_report::Unavailable;
use crate::session::prompt;
use crate::sessions::journal::first_text_line;

impl SessionActor {
    pub(super) fn start_next_turn(&mut self) -> Option<TurnFuture> {
        loop {
            let (mut req, responder) = self.queue.pop_front()?;
            if responder.cancellation().is_cancelled() {
                // The editor withdrew it (`$/cancel_request`) while it waited: it never runs.
                tracing::debug!(session = %self.id, "a queued prompt was withdrawn; skipped");
                self.report_unasked(&req, Unavailable::Cancelled);
                reply(responder.respond(PromptResponse::new(StopReason::Cancelled)));
                continue;
            }
            let Some(mut provider) = self.provider.take() else {
                tracing::error!(session = %self.id, "no provider session while idle");
                self.report_unasked(&req, Unavailable::NotReported);
                reply(responder.respond_with_error(wire::internal(
                    Reason::Internal,
                    "acplb lost this session's provider state; start a new session",
                )));
                return None;
            };
            // Queued messages announced since the last turn go with this prompt.
            self.add_held(&mut req);
            let mut turn = match self.new_turn(&req) {
                Ok(turn) => turn,
                Err(err) => {
                    self.provider = Some(provider);
                    self.report_unasked(&req, Unavailable::NotReported);
                    reply(responder.respond_with_error(err));
                    continue;
                }
            };
            self.turns += 1;
            let turn_no = self.turns;
            let lost_before = self.lost_so_far();
            let reports = self.arm_report(&req);
            self.record(|j| j.prompt(turn_no, &req.prompt, false));
            self.held_delivered();
            if let Some(registry) = &self.registry {
                registry.busy(true);
                if turn_no == 1
                    && self.titled.is_none()
                    && let Some(title) = first_text_line(&req.prompt)
                {
                    registry.title(title);
                }
            }
            let ctx = PromptContext {
                session_id: self.id.clone(),
                cwd: self.cwd.clone(),
                thread_id: provider.thread_id(),
            };
            let cancel = CancellationToken::new();
            watch_request_cancel(&responder, &cancel);
            let (steer, steer_rx) = tokio::sync::mpsc::unbounded_channel();
            let (child_cancels, cancels_rx) = tokio::sync::mpsc::unbounded_channel();
            turn.steer = SteerInbox::new(steer_rx).with_child_cancels(cancels_rx);
            let sink = self.sink();
            let pipeline = self.pipeline.clone();
            let token = cancel.clone();
            self.running = Some(Running {
                responder: Some(responder),
                steered: Vec::new(),
                steer,
                child_cancels,
                cancel,
                deadline: self.turn_timeout.map(|limit| Instant::now() + limit),
                timed_out: false,
                answer_by: None,
                lost_before,
                reports,
            });
            tracing::info!(session = %self.id, mode = %self.mode, "turn started");
            return Some(Box::pin(async move {
                // Plugins may wait here (a mail count, an `atm` call); the wait is part of the
                // turn, so other sessions go on and a cancel ends it.
                let hooks = tokio::select! {
                    // A cancel that came first wins, even over hooks that are ready at once.
                    biased;
                    // A cancel drops the hooks' future, and with it whatever they wait for.
                    () = token.cancelled() => {
                        let cancelled = TurnOutcome { stop_reason: StopReason::Cancelled, usage: None };
                        return (provider, TurnEnd::Ran(Ok(cancelled)));
                    }
                    // Polled only here; nothing of it outlives this `select!`.
                    result = pipeline.on_prompt(&ctx, &mut turn) => result,
                };
                if let Err(e) = hooks {
                    return (provider, TurnEnd::Refused(wire::plugin(&e)));
                }
                let result = provider.run_turn(turn, &sink, token).await;
                (provider, TurnEnd::Ran(result))
            }));
        }
    }

    /// The turn for `req` before the plugins have seen it.
    fn new_turn(&self, req: &PromptRequest) -> Result<TurnRequest, agent_client_protocol::Error> {
        let input = prompt::flatten(&req.prompt)
            .map_err(|e| wire::invalid_params(Reason::InvalidParams, e.to_string()))?;
        Ok(TurnRequest {
            prompt: input,
            mode: self.mode,
            settings: self.settings.clone(),
            developer_instructions: Vec::new(),
            env: Vec::new(),
            notes: Vec::new(),
            steer: SteerInbox::default(),
        })
    }
}

/// A JSON-RPC `$/cancel_request` for the prompt is treated like `session/cancel`.
fn watch_request_cancel(responder: &Responder<PromptResponse>, cancel: &CancellationToken) {
    let request = responder.cancellation();
    let cancel = cancel.clone();
    tokio::task::spawn_local(async move {
        tokio::select! {
            () = request.cancelled() => cancel.cancel(),
            () = cancel.cancelled() => {}
        }
    });
}
