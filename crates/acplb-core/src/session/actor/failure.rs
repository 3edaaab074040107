//! Typed session failures (`JetBrains` AIR's `sessionFailure`, ADR 0054): for a client that
//! declared them, a failed turn's prompt is answered `end_turn` with the failure in the
//! response's `_meta` (its kind's category and actions, Codex's words as the title), not with a
//! JSON-RPC error, as the TS peer answers. A sign-in that is needed, a turn stopped at the time
//! limit and a request that could not even start stay errors.

use agent_client_protocol::v1::schema::{Meta, PromptResponse, StopReason};

use super::SessionActor;
use crate::error::ProviderError;
use crate::provider::{FailureKind, Incident, Severity};

impl SessionActor {
    /// The `_meta` that carries `error` to a client that takes typed failures; `None` when the
    /// client does not, or `error` stays a JSON-RPC error.
    pub(super) fn typed_failure(&self, error: &ProviderError) -> Option<Meta> {
        if !self.takes.typed_failures {
            return None;
        }
        let (kind, incident, title) = match error {
            ProviderError::TurnFailed {
                message,
                kind,
                incident,
            } => (*kind, incident.clone(), message.clone()),
            ProviderError::Exited { .. } | ProviderError::Unresponsive { .. } => {
                (FailureKind::TransportLost, None, error.to_string())
            }
            _ => return None,
        };
        // The incident goes on from what the client was told during the turn (a retry's
        // warning); else it is the turn's own, new one.
        let incident = incident.unwrap_or_else(|| Incident {
            id: format!("{}:{}:error", self.id, self.turns),
            revision: 0,
        });
        let incident = Incident {
            revision: incident.revision + 1,
            ..incident
        };
        Some(incident.air_meta(kind, Severity::Error, &title))
    }
}

/// The answer of a prompt whose turn failed as `failure` says, beside the response's other
/// `_meta` (`with`).
pub(super) fn answer(failure: Meta, with: Option<Meta>) -> PromptResponse {
    let mut meta = with.unwrap_or_default();
    meta.extend(failure);
    PromptResponse::new(StopReason::EndTurn).meta(meta)
}
