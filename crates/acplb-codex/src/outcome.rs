//! How a turn's end becomes what the runtime gets, whichever transport ran it: the one
//! mapping of a completed, cancelled or failed turn to a [`TurnOutcome`] or an error. What is
//! particular to a transport (exec's exit status, a server that died) stays with it.

use acplb_core::error::ProviderError;
use acplb_core::provider::{FailureKind, Incident, TurnOutcome};
use acplb_core::secrets::KnownSecrets;
use agent_client_protocol::v1::schema::StopReason;

use crate::render::usage::{Totals, turn_delta};

/// Whether a failure message is an authentication error (HTTP 401).
pub(crate) fn is_auth_error(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("unauthorized") || lower.contains("status 401") || lower.contains("http 401")
}

/// How a turn ended, as either transport's stream tells it.
pub(crate) enum Ending {
    /// Normally: the thread's token totals before the turn and after it.
    Completed {
        /// The totals before the turn.
        before: Totals,
        /// The totals after it.
        after: Totals,
    },
    /// Cancelled (or interrupted) before it finished.
    Cancelled,
    /// Codex reported a failure.
    Failed {
        /// Codex's message, which may hold a secret.
        message: String,
        /// Whether it was an authentication error.
        auth_required: bool,
        /// What kind of failure it was, and the incident a client was told of (ADR 0054).
        kind: FailureKind,
        /// The incident the turn's failure goes on.
        incident: Option<Incident>,
    },
}

/// A turn that was cancelled.
pub(crate) fn cancelled() -> TurnOutcome {
    TurnOutcome {
        stop_reason: StopReason::Cancelled,
        usage: None,
    }
}

/// The runtime's outcome of a turn that ended as `ending`; Codex's messages are cleared of the
/// session's `secrets`.
pub(crate) fn outcome(ending: Ending, secrets: &KnownSecrets) -> Result<TurnOutcome, ProviderError> {
    match ending {
        Ending::Completed { before, after } => Ok(TurnOutcome {
            stop_reason: StopReason::EndTurn,
            usage: Some(turn_delta(&before, &after)),
        }),
        Ending::Cancelled => Ok(cancelled()),
        Ending::Failed {
            message,
            auth_required: true,
            ..
        } => Err(ProviderError::AuthRequired {
            message: format!(
                "{} (sign in from the editor, run `codex login`, or set the provider's API key)",
                secrets.redact_known(&message)
            ),
            methods: crate::adapter::auth::CALLABLE
                .iter()
                .map(|m| (*m).to_owned())
                .collect(),
        }),
        Ending::Failed {
            message,
            kind,
            incident,
            ..
        } => Err(ProviderError::TurnFailed {
            message: secrets.redact_known(&message).into_owned(),
            kind,
            incident,
        }),
    }
}
