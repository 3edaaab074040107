//! The one boundary where internal errors become ACP (JSON-RPC) errors.

use agent_client_protocol::Error;
use serde_json::json;

use crate::error::ProviderError;
use crate::plugin::PluginError;

/// A failed turn as the client sees it.
pub(crate) fn provider(e: &ProviderError) -> Error {
    match e {
        ProviderError::AuthRequired { message } => titled(Error::auth_required(), message)
            .data(json!({ "message": message, "hint": "run `codex login` and try again" })),
        // The message itself is what editors show, so it carries Codex's words.
        ProviderError::TurnFailed { message } => {
            titled(Error::internal_error(), message).data(json!({ "message": message, "source": "codex" }))
        }
        ProviderError::Prepare(_) => invalid_params(e.to_string()),
        ProviderError::Exited {
            status, stderr_tail, ..
        } => Error::internal_error().data(json!({
            "message": e.to_string(),
            "exitStatus": status,
            "stderrTail": stderr_tail,
        })),
        _ => titled(Error::internal_error(), &e.to_string()).data(json!({ "message": e.to_string() })),
    }
}

/// `error` with `message` as its message: editors show the message, so it must say what
/// happened rather than "Internal error".
fn titled(mut error: Error, message: &str) -> Error {
    message.clone_into(&mut error.message);
    error
}

/// A required plugin's failure.
pub(crate) fn plugin(e: &PluginError) -> Error {
    titled(Error::internal_error(), &e.to_string())
        .data(json!({ "message": e.to_string(), "plugin": e.plugin }))
}

/// A composer file that could not be loaded for a session.
pub(crate) fn composer(e: &crate::plugin::composer::ComposerError) -> Error {
    titled(Error::internal_error(), &e.to_string())
        .data(json!({ "message": e.to_string(), "source": "composer.toml" }))
}

/// A request that names no known session.
pub(crate) fn unknown_session(id: &str) -> Error {
    let message = format!("unknown session `{id}`");
    titled(Error::invalid_params(), &message).data(json!({ "message": message, "sessionId": id }))
}

/// Bad parameters with a readable message.
pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
    let message = message.into();
    titled(Error::invalid_params(), &message).data(json!({ "message": message }))
}

/// Sends a response; failing to send only means the client is gone, which the runtime notices
/// on its own, so it is logged and not propagated.
pub(crate) fn reply(sent: Result<(), Error>) {
    if let Err(e) = sent {
        tracing::debug!(error = %e, "could not send a response: the client connection is closed");
    }
}
