//! What a session does for vendor requests (ADR 0046): `_session/steering` joins the running
//! turn, and a request the provider answers learns the session's thread and directory.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{PromptRequest, PromptResponse};
use serde_json::{Value, json};

use super::SessionActor;
use super::steer::Injection;
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::provider::VendorSession;

impl SessionActor {
    /// `_session/steering`: into the running turn, answered `injected` at once; with no turn to
    /// join, `promptRequired` when the client asked for that, else a turn of its own, answered
    /// `startedNewTurn` with its stop reason when it ends.
    pub(super) fn steer_vendor(
        &mut self,
        req: PromptRequest,
        prompt_required: bool,
        responder: Responder<Value>,
    ) {
        if self.shutting_down {
            return reply(responder.respond_with_error(wire::internal(
                Reason::SessionStopped,
                "this session is stopping; nothing was sent",
            )));
        }
        match self.inject(&req, true) {
            Injection::Sent => reply(responder.respond(json!({ "outcome": "injected" }))),
            Injection::Bad(e) => reply(responder.respond_with_error(e)),
            Injection::NotNow if prompt_required && self.running.is_none() && self.queue.is_empty() => {
                reply(responder.respond(json!({ "outcome": "promptRequired", "reason": "noRunningTurn" })));
            }
            Injection::NotNow => {
                let turn = responder.wrap_params(|_, answer: Result<PromptResponse, _>| {
                    answer.map(|a| json!({ "outcome": "startedNewTurn", "stopReason": a.stop_reason }))
                });
                // Queued, never interleaved: it runs when the turns before it have ended.
                self.queue.push_back((req, turn));
            }
        }
    }

    /// What a vendor request naming this session tells the provider.
    pub(super) fn describe(&self, answer: tokio::sync::oneshot::Sender<VendorSession>) {
        let described = VendorSession {
            id: self.id.to_string(),
            thread_id: self.thread_id(),
            cwd: self.cwd.clone(),
        };
        if answer.send(described).is_err() {
            tracing::debug!(session = %self.id, "the vendor request's asker is gone");
        }
    }
}
