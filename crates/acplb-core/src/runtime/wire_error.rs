//! The one boundary where internal errors become ACP (JSON-RPC) errors.
//!
//! Editors show an error's `message` and rarely its `data`, so every error built here says in
//! its `message` what happened (never a bare "Internal error"); `data` repeats it with details.

use std::time::Duration;

use agent_client_protocol::Error;
use serde_json::json;

use crate::error::ProviderError;
use crate::plugin::PluginError;

/// A failed turn as the client sees it.
pub(crate) fn provider(e: &ProviderError) -> Error {
    match e {
        // The provider's message says how to log in; the runtime adds no words of its own.
        ProviderError::AuthRequired { message } => {
            titled(Error::auth_required(), message).data(json!({ "message": message }))
        }
        // The message itself is what editors show, so it carries the provider's words.
        ProviderError::TurnFailed { message } => {
            titled(Error::internal_error(), message).data(json!({ "message": message, "source": "provider" }))
        }
        ProviderError::Prepare(_) => invalid_params(e.to_string()),
        ProviderError::Exited {
            program,
            status,
            stderr_tail,
        } => {
            let message = with_last_lines(
                format!(
                    "`{}` exited before the turn finished ({status})",
                    program.display()
                ),
                stderr_tail,
            );
            titled(Error::internal_error(), &message).data(json!({
                "message": message,
                "exitStatus": status,
                "stderrTail": stderr_tail,
            }))
        }
        ProviderError::Unresponsive {
            process,
            unanswered,
            stderr_tail,
        } => {
            let message = with_last_lines(
                format!(
                    "`{process}` did not answer {unanswered}; acplb stopped it, and the next prompt starts it again"
                ),
                stderr_tail,
            );
            titled(Error::internal_error(), &message).data(json!({
                "message": message,
                "reason": "unresponsive",
                "stderrTail": stderr_tail,
            }))
        }
        _ => titled(Error::internal_error(), &e.to_string()).data(json!({ "message": e.to_string() })),
    }
}

/// `message` followed by the last lines of a stderr tail, if it has any.
fn with_last_lines(mut message: String, stderr_tail: &str) -> String {
    if let Some(last) = last_lines(stderr_tail) {
        message.push_str("; its last output: ");
        message.push_str(&last);
    }
    message
}

/// The end of a stderr tail short enough for a message: its last lines, joined with ` | `.
fn last_lines(tail: &str) -> Option<String> {
    const LINES: usize = 6;
    const CHARS: usize = 600;
    let lines: Vec<&str> = tail.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let text = lines[lines.len().saturating_sub(LINES)..].join(" | ");
    if text.is_empty() {
        return None;
    }
    let count = text.chars().count();
    Some(if count > CHARS {
        let start: String = text.chars().skip(count - CHARS).collect();
        format!("…{start}")
    } else {
        text
    })
}

/// A turn stopped at the turn time limit.
pub(crate) fn turn_timeout(limit: Duration) -> Error {
    let shown = humantime::format_duration(limit);
    let message = format!(
        "the turn hit the time limit of {shown} and was stopped; what it produced so far was kept. \
         Change the limit with `--turn-timeout` or `ACPLB_TURN_TIMEOUT` (for example `2h`; `0` for none)"
    );
    titled(Error::internal_error(), &message).data(json!({
        "message": message,
        "limitSeconds": limit.as_secs_f64(),
        "reason": "turn_timeout",
    }))
}

/// An error of acplb itself, with `message` saying what went wrong.
pub(crate) fn internal(message: &str) -> Error {
    titled(Error::internal_error(), message).data(json!({ "message": message }))
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_crashed_provider_says_why_in_the_message() {
        let e = ProviderError::Exited {
            program: PathBuf::from("/opt/codex"),
            status: "exit status: 3".into(),
            stderr_tail: "starting\n\nError: the config is broken\n".into(),
        };
        let err = provider(&e);
        assert_eq!(
            err.message,
            "`/opt/codex` exited before the turn finished (exit status: 3); its last output: starting | Error: the config is broken"
        );
        assert_eq!(err.data.unwrap()["exitStatus"], "exit status: 3");
    }

    #[test]
    fn an_unresponsive_provider_is_an_internal_error_saying_what_it_did_not_answer() {
        let e = ProviderError::Unresponsive {
            process: "/opt/codex app-server".into(),
            unanswered: "`initialize` within 30s".into(),
            stderr_tail: "loading\n".into(),
        };
        let err = provider(&e);
        assert_eq!(err.code, Error::internal_error().code);
        assert_eq!(
            err.message,
            "`/opt/codex app-server` did not answer `initialize` within 30s; acplb stopped it, and the next prompt starts it again; its last output: loading"
        );
        assert_eq!(err.data.unwrap()["reason"], "unresponsive");
    }

    #[test]
    fn every_provider_error_has_a_telling_message() {
        let errors = [
            ProviderError::Spawn {
                program: "/x/codex".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            },
            ProviderError::WorkDirGone {
                cwd: "/w/gone".into(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            },
            ProviderError::Exited {
                program: "/x/codex".into(),
                status: "signal: 9 (SIGKILL)".into(),
                stderr_tail: String::new(),
            },
            ProviderError::Unresponsive {
                process: "/x/codex app-server".into(),
                unanswered: "`turn/start` within 1m".into(),
                stderr_tail: String::new(),
            },
            ProviderError::TurnFailed {
                message: "model said no".into(),
            },
            ProviderError::AuthRequired {
                message: "log in".into(),
            },
            ProviderError::Prepare("bad image".into()),
            ProviderError::Io(std::io::Error::other("pipe closed")),
        ];
        for e in &errors {
            let err = provider(e);
            assert_ne!(err.message, "Internal error", "{e:?}");
            assert_eq!(err.message, e.to_string(), "{e:?}");
        }
        assert!(provider(&errors[1]).message.contains("/w/gone"));
    }

    #[test]
    fn the_timeout_names_the_limit_and_how_to_change_it() {
        let err = turn_timeout(Duration::from_secs(90));
        assert!(err.message.contains("time limit of 1m 30s"), "{}", err.message);
        assert!(err.message.contains("--turn-timeout") && err.message.contains("ACPLB_TURN_TIMEOUT"));
    }
}
