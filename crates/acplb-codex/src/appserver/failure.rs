//! A turn's failure as `JetBrains` AIR's typed session failures see it (ADR 0054): Codex's
//! `codexErrorInfo` mapped to a failure kind by the TS peer's tables, and the warning a client
//! that declared `sessionFailure` gets for each retry instead of text.

use acplb_core::provider::{FailureKind, Incident, Severity};
use agent_client_protocol::v1::schema::{SessionInfoUpdate, SessionUpdate};
use serde_json::Value;

/// The kind of a failure whose `codexErrorInfo` is `info`: a string kind, or an object whose
/// one key is the kind (`{"httpConnectionFailed": {"httpStatusCode": 503}}`). A 401 means a
/// sign-in, a 429 a rate limit, whatever the kind; anything unknown is a provider error.
pub(crate) fn kind(info: Option<&Value>) -> FailureKind {
    let status = match info {
        Some(Value::Object(map)) => map
            .values()
            .find_map(|v| v.get("httpStatusCode").and_then(Value::as_u64)),
        _ => None,
    };
    match (info, status) {
        (_, Some(401)) => FailureKind::AuthRequired,
        (_, Some(429)) => FailureKind::RateLimited,
        (Some(Value::String(name)), _) => named(name),
        (Some(Value::Object(map)), _) => map.keys().map(|k| structured(k)).next().unwrap_or_default(),
        _ => FailureKind::ProviderError,
    }
}

/// A kind Codex names with a string.
fn named(name: &str) -> FailureKind {
    match name {
        "contextWindowExceeded" => FailureKind::ContextExhausted,
        "sessionBudgetExceeded" => FailureKind::BudgetExhausted,
        "usageLimitExceeded" => FailureKind::QuotaExhausted,
        "rateLimitExceeded" => FailureKind::RateLimited,
        "serverOverloaded" => FailureKind::Overloaded,
        "cyberPolicy" | "misalignmentPolicyViolation" => FailureKind::PolicyDenied,
        "internalServerError" => FailureKind::InternalError,
        "unauthorized" => FailureKind::AuthRequired,
        "badRequest" => FailureKind::BadRequest,
        _ => FailureKind::ProviderError,
    }
}

/// A kind Codex gives as an object's key.
fn structured(key: &str) -> FailureKind {
    match key {
        "httpConnectionFailed"
        | "responseStreamConnectionFailed"
        | "responseStreamDisconnected"
        | "responseTooManyFailedAttempts" => FailureKind::TransportLost,
        _ => FailureKind::ProviderError,
    }
}

/// The `session_info_update` that tells an AIR client of revision `incident.revision` of the
/// incident, a failure of `kind` with Codex's words `title`.
pub(crate) fn update(
    incident: &Incident,
    kind: FailureKind,
    severity: Severity,
    title: &str,
) -> SessionUpdate {
    SessionUpdate::SessionInfoUpdate(SessionInfoUpdate::new().meta(incident.air_meta(kind, severity, title)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn codex_error_info_maps_as_the_peer_maps_it() {
        let cases = [
            (json!("contextWindowExceeded"), FailureKind::ContextExhausted),
            (json!("usageLimitExceeded"), FailureKind::QuotaExhausted),
            (json!("serverOverloaded"), FailureKind::Overloaded),
            (json!("cyberPolicy"), FailureKind::PolicyDenied),
            (json!("badRequest"), FailureKind::BadRequest),
            (json!("unauthorized"), FailureKind::AuthRequired),
            (json!("internalServerError"), FailureKind::InternalError),
            (json!("sandboxError"), FailureKind::ProviderError),
            (json!("somethingNew"), FailureKind::ProviderError),
            (
                json!({"responseStreamDisconnected": {"httpStatusCode": null}}),
                FailureKind::TransportLost,
            ),
            (
                json!({"httpConnectionFailed": {"httpStatusCode": 503}}),
                FailureKind::TransportLost,
            ),
            (
                json!({"httpConnectionFailed": {"httpStatusCode": 429}}),
                FailureKind::RateLimited,
            ),
            (
                json!({"responseStreamConnectionFailed": {"httpStatusCode": 401}}),
                FailureKind::AuthRequired,
            ),
            (json!({"activeTurnNotSteerable": {}}), FailureKind::ProviderError),
            (json!(7), FailureKind::ProviderError),
        ];
        for (info, kind) in cases {
            assert_eq!(super::kind(Some(&info)), kind, "{info}");
        }
        assert_eq!(super::kind(None), FailureKind::ProviderError);
    }
}
