//! The one boundary where internal errors become ACP (JSON-RPC) errors. It sits below the
//! runtime and the session actors, which both answer through it.
//!
//! Editors show an error's `message` and rarely its `data`, so every error built here says in
//! its `message` what happened (never a bare "Internal error"); `data` repeats it with details
//! and carries the error's stable [`Reason`] as `data.reason`, for editors and scripts.

use std::time::Duration;

use agent_client_protocol::Error;
use serde_json::{Value, json};

use super::{ProviderError, Reason};
use crate::plugin::PluginError;

/// A failed turn as the client sees it.
pub(crate) fn provider(e: &ProviderError) -> Error {
    match e {
        // The provider's message says how to log in; the runtime adds no words of its own.
        ProviderError::AuthRequired { message, methods } => build(
            Error::auth_required(),
            Reason::AuthRequired,
            message,
            json!({ "authMethods": methods }),
        ),
        // The message itself is what editors show, so it carries the provider's words.
        ProviderError::TurnFailed { message, .. } => build(
            Error::internal_error(),
            Reason::TurnFailed,
            message,
            json!({ "source": "provider" }),
        ),
        ProviderError::Prepare(_) => invalid_params(Reason::PrepareFailed, e.to_string()),
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
            build(
                Error::internal_error(),
                Reason::ProviderExited,
                &message,
                json!({ "exitStatus": status, "stderrTail": stderr_tail }),
            )
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
            build(
                Error::internal_error(),
                Reason::Unresponsive,
                &message,
                json!({ "stderrTail": stderr_tail }),
            )
        }
        ProviderError::Spawn { .. } => internal(Reason::ProviderNotStarted, &e.to_string()),
        ProviderError::WorkDirGone { .. } => internal(Reason::WorkDirGone, &e.to_string()),
        ProviderError::Io(_) => internal(Reason::ProviderIo, &e.to_string()),
    }
}

/// A sign-in or sign-out that did not succeed, as the client sees it.
pub(crate) fn auth(e: &crate::auth::AuthFailure) -> Error {
    use crate::auth::AuthFailure;
    match e {
        AuthFailure::UnknownMethod { known, .. } => build(
            Error::invalid_params(),
            Reason::InvalidParams,
            &e.to_string(),
            json!({ "authMethods": known }),
        ),
        AuthFailure::InvalidParams(message) => invalid_params(Reason::InvalidParams, message.clone()),
        AuthFailure::ActionNeeded { message, data } => build(
            Error::auth_required(),
            Reason::AuthRequired,
            message,
            data.clone(),
        ),
        AuthFailure::Failed(message) => internal(Reason::AuthFailed, message),
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
    build(
        Error::internal_error(),
        Reason::TurnTimeout,
        &message,
        json!({ "limitSeconds": limit.as_secs_f64() }),
    )
}

/// An error of acplb itself, with `message` saying what went wrong.
pub(crate) fn internal(reason: Reason, message: &str) -> Error {
    build(Error::internal_error(), reason, message, json!({}))
}

/// Bad parameters with a readable message.
pub(crate) fn invalid_params(reason: Reason, message: impl Into<String>) -> Error {
    build(Error::invalid_params(), reason, &message.into(), json!({}))
}

/// A required plugin's failure.
pub(crate) fn plugin(e: &PluginError) -> Error {
    build(
        Error::internal_error(),
        Reason::PluginRefused,
        &e.to_string(),
        json!({ "plugin": e.plugin }),
    )
}

/// A composer file that could not be loaded for a session.
pub(crate) fn composer(e: &crate::plugin::composer::ComposerError) -> Error {
    build(
        Error::internal_error(),
        Reason::Composer,
        &e.to_string(),
        json!({ "source": "composer.toml" }),
    )
}

/// A method acplb does not have (`-32601`), named in the message and in `data.method`.
pub(crate) fn method_not_found(method: &str) -> Error {
    build(
        Error::method_not_found(),
        Reason::MethodNotFound,
        &format!("Method not found: acplb has no method `{method}`"),
        json!({ "method": method }),
    )
}

/// A request that names no known session.
pub(crate) fn unknown_session(id: &str) -> Error {
    let message = subagents_session(id).unwrap_or_else(|| format!("unknown session `{id}`"));
    build(
        Error::invalid_params(),
        Reason::UnknownSession,
        &message,
        json!({ "sessionId": id }),
    )
}

/// A request naming a session this connection closed (ADR 0012): unknown now, and how to open
/// it again.
pub(crate) fn closed_session(id: &str) -> Error {
    build(
        Error::invalid_params(),
        Reason::UnknownSession,
        &format!("unknown session `{id}`: it was closed; session/load or session/resume opens it again"),
        json!({ "sessionId": id }),
    )
}

/// Why a request naming a subagent's session (ADR 0055) finds none: such a session is shown,
/// never driven or kept on its own (its parent's agent directs it, its parent's journal keeps
/// it). Known by its shape: `<parent>:subagent:<thread>`, or AIR's `<thread>:generation:<n>`;
/// AIR's first life of a child is its bare thread id, which looks like any other, and is known
/// when this process sent it to an AIR client (`provider::air_ids`). `None` for any other id.
pub(crate) fn subagents_session(id: &str) -> Option<String> {
    use crate::provider::route::{CHILD, GENERATION};
    (id.contains(CHILD) || id.contains(GENERATION) || crate::provider::air_ids::was_shown(id)).then(|| {
        format!(
            "session `{id}` is a subagent's session: the agent of the session that started it directs it, so it takes no prompt or setting from the editor (a cancel stops its work while it runs), and loading its parent shows it again"
        )
    })
}

/// A request naming a session that does not exist, where ACP asks for `-32002` (resource not
/// found: the unstable session methods), the id in `data`.
pub(crate) fn not_found(reason: Reason, id: &str, message: &str) -> Error {
    build(
        Error::new(
            agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND,
            "Resource not found",
        ),
        reason,
        message,
        json!({ "sessionId": id }),
    )
}

/// `error` with `message` as its message (editors show it, so it says what happened rather
/// than "Internal error") and `data`: the message again, the reason, and the `extra` fields.
fn build(mut error: Error, reason: Reason, message: &str, extra: Value) -> Error {
    message.clone_into(&mut error.message);
    let mut data = json!({ "message": message, "reason": reason.as_str() });
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    error.data(data)
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
    fn a_subagents_session_is_named_as_one_in_either_shape() {
        for id in ["s1:subagent:01a2", "01a2:generation:2"] {
            let message = unknown_session(id).message;
            assert!(message.contains("is a subagent's session"), "{message}");
            assert!(message.contains("takes no prompt"), "{message}");
        }
        assert_eq!(unknown_session("01a2").message, "unknown session `01a2`");
    }

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
        let data = err.data.unwrap();
        assert_eq!(data["exitStatus"], "exit status: 3");
        assert_eq!(data["reason"], "provider_exited");
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
            ProviderError::turn_failed("model said no"),
            ProviderError::AuthRequired {
                message: "log in".into(),
                methods: vec!["api-key".into()],
            },
            ProviderError::Prepare("bad image".into()),
            ProviderError::Io(std::io::Error::other("pipe closed")),
        ];
        let reasons = [
            Reason::ProviderNotStarted,
            Reason::WorkDirGone,
            Reason::ProviderExited,
            Reason::Unresponsive,
            Reason::TurnFailed,
            Reason::AuthRequired,
            Reason::PrepareFailed,
            Reason::ProviderIo,
        ];
        for (e, reason) in errors.iter().zip(reasons) {
            let err = provider(e);
            assert_ne!(err.message, "Internal error", "{e:?}");
            assert_eq!(err.message, e.to_string(), "{e:?}");
            assert_eq!(Reason::of(&err), Some(reason), "{e:?}");
            assert_eq!(err.data.as_ref().unwrap()["message"], err.message.as_str());
        }
        assert!(provider(&errors[1]).message.contains("/w/gone"));
        assert_eq!(
            provider(&errors[5]).data.unwrap()["authMethods"],
            json!(["api-key"])
        );
    }

    #[test]
    fn a_failed_sign_in_says_why_and_an_unknown_method_names_the_known_ones() {
        use crate::auth::AuthFailure;
        let unknown = auth(&AuthFailure::UnknownMethod {
            method: "pw".into(),
            known: vec!["api-key".into()],
        });
        assert_eq!(i32::from(unknown.code), -32602);
        assert_eq!(unknown.data.as_ref().unwrap()["authMethods"], json!(["api-key"]));
        let waiting = auth(&AuthFailure::ActionNeeded {
            message: "open the page".into(),
            data: json!({"userCode": "C"}),
        });
        assert_eq!(i32::from(waiting.code), -32000);
        assert_eq!(Reason::of(&waiting), Some(Reason::AuthRequired));
        assert_eq!(waiting.data.as_ref().unwrap()["userCode"], "C");
        let failed = auth(&AuthFailure::Failed("expired".into()));
        assert_eq!(Reason::of(&failed), Some(Reason::AuthFailed));
        assert_eq!(failed.message, "expired");
    }

    #[test]
    fn the_timeout_names_the_limit_and_how_to_change_it() {
        let err = turn_timeout(Duration::from_secs(90));
        assert!(err.message.contains("time limit of 1m 30s"), "{}", err.message);
        assert!(err.message.contains("--turn-timeout") && err.message.contains("ACPLB_TURN_TIMEOUT"));
        assert_eq!(Reason::of(&err), Some(Reason::TurnTimeout));
        assert_eq!(err.data.unwrap()["limitSeconds"], 90.0);
    }

    #[test]
    fn the_other_errors_carry_their_reason_and_keep_their_fields() {
        let plugin = plugin(&PluginError::new("atm-identity", "held"));
        assert_eq!(Reason::of(&plugin), Some(Reason::PluginRefused));
        assert_eq!(plugin.data.unwrap()["plugin"], "atm-identity");
        let unknown = unknown_session("s1");
        assert_eq!(unknown.code, Error::invalid_params().code);
        assert_eq!(Reason::of(&unknown), Some(Reason::UnknownSession));
        assert_eq!(unknown.data.unwrap()["sessionId"], "s1");
        let stopping = internal(Reason::Stopping, "acplb is stopping");
        assert_eq!(stopping.code, Error::internal_error().code);
        assert_eq!(stopping.message, "acplb is stopping");
        assert_eq!(Reason::of(&stopping), Some(Reason::Stopping));
    }
}
