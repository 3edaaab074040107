//! Prompts sent while a turn runs, when the session steers (`while_busy` = `steer`): sent into
//! the running turn through its inbox, and answered when that turn ends, the way it is.

use std::time::Duration;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse, StopReason};

use super::SessionActor;
use crate::error::ProviderError;
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::provider::{TurnOutcome, WhileBusy};
use crate::session::prompt;

/// What became of a prompt offered to the running turn.
pub(super) enum Injection {
    /// It went into the running turn.
    Sent,
    /// No turn takes it now (none runs, it is stopping, the session cannot steer, or prompts
    /// wait before it): it must be queued.
    NotNow,
    /// It cannot be sent at all (its content is not what a turn takes).
    Bad(agent_client_protocol::Error),
}

impl SessionActor {
    /// Sends a prompt into the running turn when the session steers (or `always`, where the
    /// provider can) and nothing waits before it; gives it back when it must be queued instead.
    pub(super) fn try_steer(
        &mut self,
        req: PromptRequest,
        responder: Responder<PromptResponse>,
        always: bool,
    ) -> Option<(PromptRequest, Responder<PromptResponse>)> {
        match self.inject(&req, always) {
            Injection::NotNow => Some((req, responder)),
            Injection::Bad(e) => {
                self.report_unasked(&req, crate::session::file_report::Unavailable::NotReported);
                reply(responder.respond_with_error(e));
                None
            }
            Injection::Sent => {
                self.report_steered(&req);
                if let Some(running) = self.running.as_mut() {
                    running.steered.push(responder);
                }
                None
            }
        }
    }

    /// Offers `req` to the running turn when the provider can steer, nothing waits before it,
    /// and the session steers prompts sent while busy or `asked` (the client asked to steer).
    pub(super) fn inject(&mut self, req: &PromptRequest, asked: bool) -> Injection {
        let steering = (asked || self.settings.while_busy == WhileBusy::Steer) && self.catalog.steer;
        let Some(running) = self
            .running
            .as_mut()
            .filter(|r| steering && !r.cancel.is_cancelled())
        else {
            return Injection::NotNow;
        };
        if !self.queue.is_empty() {
            return Injection::NotNow;
        }
        let input = match prompt::flatten(&req.prompt) {
            Ok(input) => input,
            Err(e) => return Injection::Bad(wire::invalid_params(Reason::InvalidParams, e.to_string())),
        };
        if running.steer.send(input).is_err() {
            return Injection::NotNow;
        }
        tracing::info!(session = %self.id, "prompt steered into the running turn");
        if let Some(journal) = &self.journal {
            journal.prompt(self.turns, &req.prompt, true);
        }
        Injection::Sent
    }
}

/// Answers a prompt that was steered into a turn, the way the turn itself is answered.
pub(super) fn answer(
    responder: Responder<PromptResponse>,
    result: &Result<TurnOutcome, ProviderError>,
    timeout: Option<Duration>,
) {
    match (result, timeout) {
        (Ok(o), Some(limit)) if o.stop_reason == StopReason::Cancelled => {
            reply(responder.respond_with_error(wire::turn_timeout(limit)));
        }
        (Ok(o), _) => reply(responder.respond(PromptResponse::new(o.stop_reason))),
        (Err(e), _) => reply(responder.respond_with_error(wire::provider(e))),
    }
}
