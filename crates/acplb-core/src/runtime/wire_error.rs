//! The one boundary where internal errors become ACP (JSON-RPC) errors.

use agent_client_protocol::Error;
use serde_json::json;

use crate::error::ProviderError;
use crate::plugin::PluginError;

/// A failed turn as the client sees it.
pub(crate) fn provider(e: &ProviderError) -> Error {
    match e {
        ProviderError::AuthRequired { message } => Error::auth_required()
            .data(json!({ "message": message, "hint": "run `codex login` and try again" })),
        ProviderError::TurnFailed { message } => {
            Error::internal_error().data(json!({ "message": message, "source": "codex" }))
        }
        ProviderError::Prepare(_) => Error::invalid_params().data(json!({ "message": e.to_string() })),
        ProviderError::Exited {
            status, stderr_tail, ..
        } => Error::internal_error().data(json!({
            "message": e.to_string(),
            "exitStatus": status,
            "stderrTail": stderr_tail,
        })),
        _ => Error::internal_error().data(json!({ "message": e.to_string() })),
    }
}

/// A required plugin's failure.
pub(crate) fn plugin(e: &PluginError) -> Error {
    Error::internal_error().data(json!({ "message": e.to_string(), "plugin": e.plugin }))
}

/// A composer file that could not be loaded for a session.
pub(crate) fn composer(e: &crate::plugin::composer::ComposerError) -> Error {
    Error::internal_error().data(json!({ "message": e.to_string(), "source": "composer.toml" }))
}

/// A request that names no known session.
pub(crate) fn unknown_session(id: &str) -> Error {
    Error::invalid_params().data(json!({ "message": format!("unknown session `{id}`"), "sessionId": id }))
}

/// Bad parameters with a readable message.
pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
    Error::invalid_params().data(json!({ "message": message.into() }))
}

/// Sends a response; failing to send only means the client is gone, which the runtime notices
/// on its own, so it is logged and not propagated.
pub(crate) fn reply(sent: Result<(), Error>) {
    if let Err(e) = sent {
        tracing::debug!(error = %e, "could not send a response: the client connection is closed");
    }
}
