//! `session/close`, and what a request naming no open session is told: one this connection
//! closed is told so, and how to open it again (ADR 0012).

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{CloseSessionResponse, SessionId};

use super::store::{Store, send};
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::session::SessionMsg;

/// How many closed sessions [`Store::closed`] remembers.
pub(super) const CLOSED_KEPT: usize = 256;

impl Store {
    /// `session/close`: the session's turn is cancelled, its provider side stopped, then the
    /// request is answered; its journal stays for a later load.
    pub(super) fn close_session(&mut self, id: &SessionId, responder: Responder<CloseSessionResponse>) {
        let Some(handle) = self.sessions.remove(id) else {
            if self.opening.contains_key(id) {
                reply(responder.respond_with_error(wire::invalid_params(
                    Reason::SessionOpening,
                    format!("session `{id}` is still opening; close it once it has opened"),
                )));
            } else {
                self.unknown(id, responder);
            }
            return;
        };
        send(&handle.tx, SessionMsg::Close);
        self.closed.insert(id.clone());
        let id = id.clone();
        tokio::task::spawn_local(async move {
            if let Err(e) = handle.task.await {
                tracing::error!(session = %id, error = %e, "session actor ended abnormally");
            }
            tracing::info!(session = %id, "session closed");
            reply(responder.respond(CloseSessionResponse::new()));
        });
    }

    /// Answers a request naming no open session: one this connection closed is told so, and
    /// how to open it again.
    pub(super) fn unknown<T: agent_client_protocol::JsonRpcResponse>(
        &self,
        id: &SessionId,
        responder: Responder<T>,
    ) {
        let error = if self.closed.contains(id) {
            wire::closed_session(&id.to_string())
        } else {
            wire::unknown_session(&id.to_string())
        };
        reply(responder.respond_with_error(error));
    }
}
