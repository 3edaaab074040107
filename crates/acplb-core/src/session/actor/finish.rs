//! How a turn ends: the prompt (and any prompt steered into it) answered, the journal's turn
//! end, the registry's status, the plugins told. A cancelled turn's prompt is answered within
//! [`CANCEL_ANSWER`] even while the provider is still stopping; the rest waits for its end.

use agent_client_protocol::v1::schema::{PromptResponse, StopReason, Usage};
use tokio::time::Instant;

use super::{CANCEL_ANSWER, Running, SessionActor, failure, steer};
use crate::error::ProviderError;
use crate::error::wire::{self, reply};
use crate::provider::TurnOutcome;
use crate::session::file_report::Unavailable;

impl SessionActor {
    /// A required plugin refused the prompt: answer with its error; no turn ran.
    pub(super) fn refuse_turn(&mut self, error: agent_client_protocol::Error) {
        let Some(Running {
            responder,
            steered,
            lost_before,
            reports,
            ..
        }) = self.end_running()
        else {
            return;
        };
        tracing::info!(session = %self.id, error = %error.message, "prompt refused by a plugin");
        self.send_reports(&reports, Err(Unavailable::NotReported));
        let turn = self.turns;
        self.record(|j| j.turn_end(turn, "refused", Some(error.message.clone())));
        self.unrecorded(lost_before);
        for responder in steered {
            reply(responder.respond_with_error(error.clone()));
        }
        if let Some(responder) = responder {
            reply(responder.respond_with_error(error));
        }
        self.pull_queue();
    }

    /// The running turn was cancelled (or hit the time limit): its prompt is answered by
    /// [`CANCEL_ANSWER`] from now, whatever the provider does.
    pub(super) fn on_turn_cancelled(&mut self) {
        if let Some(running) = self.running.as_mut() {
            running.answer_by = Some(Instant::now() + CANCEL_ANSWER);
        }
    }

    /// The cancelled turn's provider is still stopping: its prompt (and those steered into it)
    /// are answered now, `cancelled` (or the time limit's error); the turn's end is recorded
    /// when it comes, and the next turn starts only then.
    pub(super) fn answer_cancelled(&mut self) {
        let limit = self.turn_timeout;
        let Some(running) = self.running.as_mut() else {
            return;
        };
        let Some(responder) = running.responder.take() else {
            return;
        };
        let reports = std::mem::take(&mut running.reports);
        tracing::info!(session = %self.id, "the provider is still stopping the cancelled turn; its prompt is answered now");
        let cancelled = Ok(crate::provider::TurnOutcome {
            stop_reason: StopReason::Cancelled,
            usage: None,
        });
        let timeout = limit.filter(|_| running.timed_out);
        let steered: Vec<_> = running.steered.drain(..).collect();
        self.send_reports(&reports, Err(Unavailable::Cancelled));
        for responder in std::iter::once(responder).chain(steered) {
            steer::answer(responder, &cancelled, timeout);
        }
    }

    /// The running turn, taken: the watcher of its `$/cancel_request` ended, the registry told
    /// the session is idle.
    fn end_running(&mut self) -> Option<Running> {
        let running = self.running.take()?;
        running.cancel.cancel();
        if let Some(registry) = &self.registry {
            registry.busy(false);
        }
        Some(running)
    }

    /// The turn ended: its prompt is answered (unless [`Self::answer_cancelled`] did already),
    /// its end recorded, the next message pulled.
    pub(super) fn finish_turn(&mut self, result: Result<TurnOutcome, ProviderError>) {
        let Some(Running {
            responder,
            timed_out,
            steered,
            lost_before,
            reports,
            ..
        }) = self.end_running()
        else {
            return;
        };
        let ending = match &result {
            Ok(o) if o.stop_reason == StopReason::Cancelled => Err(Unavailable::Cancelled),
            Ok(_) => Ok(()),
            // Stopped at the time limit.
            Err(_) if timed_out => Err(Unavailable::Cancelled),
            Err(_) => Err(Unavailable::ProviderError),
        };
        // Before any of the turn's prompts is answered.
        self.send_reports(&reports, ending);
        // A steered prompt became part of this turn: it ends as the turn does.
        // A turn stopped at the time limit ends with the limit's error, typed failures or not.
        let typed = match &result {
            Err(e) if !timed_out => self.typed_failure(e),
            _ => None,
        };
        for other in steered {
            match &typed {
                Some(failure) => reply(other.respond(failure::answer(failure.clone(), None))),
                None => steer::answer(other, &result, self.turn_timeout.filter(|_| timed_out)),
            }
        }
        let finished_anyway = matches!(&result, Ok(o) if o.stop_reason != StopReason::Cancelled);
        if let (true, false, Some(limit)) = (timed_out, finished_anyway, self.turn_timeout) {
            tracing::info!(session = %self.id, "turn stopped at the time limit");
            let turn = self.turns;
            let why = format!(
                "the turn hit the time limit of {}",
                humantime::format_duration(limit)
            );
            self.record(|j| j.turn_end(turn, "timeout", Some(why)));
            self.unrecorded(lost_before);
            if let Some(responder) = responder {
                reply(responder.respond_with_error(wire::turn_timeout(limit)));
            }
            self.pipeline.on_turn_finished(&self.id);
            self.pull_queue();
            return;
        }
        let turn = self.turns;
        match &result {
            Ok(outcome) => self.record(|j| j.turn_end(turn, &stop_name(outcome.stop_reason), None)),
            Err(e) => self.record(|j| j.turn_end(turn, "error", Some(e.to_string()))),
        }
        // Said before the answer, so the editor knows what the answer covers.
        let unrecorded = self.unrecorded(lost_before);
        match result {
            Ok(outcome) => {
                tracing::info!(session = %self.id, stop = ?outcome.stop_reason, "turn finished");
                let mut response = PromptResponse::new(outcome.stop_reason).meta(unrecorded);
                if let Some(u) = outcome.usage {
                    response = response.usage(
                        Usage::new(u.input_tokens + u.output_tokens, u.input_tokens, u.output_tokens)
                            .thought_tokens(u.reasoning_output_tokens)
                            .cached_read_tokens(u.cached_input_tokens),
                    );
                }
                if let Some(responder) = responder {
                    reply(responder.respond(response));
                }
            }
            Err(e) => {
                tracing::info!(session = %self.id, error = %e, "turn failed");
                match (responder, typed) {
                    (Some(responder), Some(failure)) => {
                        reply(responder.respond(failure::answer(failure, unrecorded)));
                    }
                    (Some(responder), None) => reply(responder.respond_with_error(wire::provider(&e))),
                    (None, _) => {}
                }
            }
        }
        self.pipeline.on_turn_finished(&self.id);
        // The session is idle: messages that waited through the turn can be claimed now.
        self.pull_queue();
    }
}

/// A stop reason as the journal writes it (its wire name).
fn stop_name(stop: StopReason) -> String {
    match serde_json::to_value(stop) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{stop:?}"),
    }
}
