//! What kind of failure ended a turn, as a provider classifies it: for a client that takes
//! typed session failures (`JetBrains` AIR's `sessionFailure`, ADR 0054), each kind has the
//! category and the actions the TS peer gives it.

use serde::Serialize;
use serde_json::{Value, json};

/// The AIR capability (and `_meta` key) of typed session failures.
pub const AIR_SESSION_FAILURE: &str = "sessionFailure";

/// The longest failure title sent, in characters (the peer's bound).
const MAX_TITLE_CHARS: usize = 240;

/// The kind of a turn's failure (the TS peer's session failure kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// The connection to the model (or to the provider's process) was lost.
    TransportLost,
    /// The user must sign in.
    AuthRequired,
    /// Too many requests: wait and retry.
    RateLimited,
    /// The plan's usage is used up.
    QuotaExhausted,
    /// The service is overloaded.
    Overloaded,
    /// The conversation no longer fits the model's context.
    ContextExhausted,
    /// The session's budget is spent.
    BudgetExhausted,
    /// A policy refused the request.
    PolicyDenied,
    /// The request was malformed.
    BadRequest,
    /// Any other failure of the provider or the model.
    #[default]
    ProviderError,
    /// A failure inside the provider itself.
    InternalError,
}

impl FailureKind {
    /// The category a client groups the failure under.
    pub fn category(self) -> &'static str {
        match self {
            Self::TransportLost => "connection",
            Self::AuthRequired => "access",
            Self::RateLimited | Self::QuotaExhausted | Self::ContextExhausted | Self::BudgetExhausted => {
                "limit"
            }
            Self::Overloaded | Self::ProviderError | Self::InternalError => "service",
            Self::PolicyDenied | Self::BadRequest => "request",
        }
    }

    /// What the user can do about it.
    pub fn actions(self) -> &'static [&'static str] {
        match self {
            Self::TransportLost | Self::InternalError => &["retry", "new_session"],
            Self::AuthRequired => &["login"],
            Self::RateLimited | Self::Overloaded | Self::ProviderError => &["retry"],
            Self::ContextExhausted | Self::BudgetExhausted => &["new_session"],
            Self::QuotaExhausted | Self::PolicyDenied | Self::BadRequest => &[],
        }
    }
}

/// A failure the provider already told the client of during the turn (a retry's warning), so
/// that the turn's failure goes on as the same incident: its id and the last revision sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incident {
    /// The incident's id.
    pub id: String,
    /// The last revision the client got.
    pub revision: u64,
}

/// How bad a failure is: a warning (a retry under way) or the turn's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Something failed and is being retried.
    Warning,
    /// The turn failed.
    Error,
}

impl Incident {
    /// The `_meta` that carries this revision of the incident to an AIR client, as the TS peer
    /// shapes it: `{"jetbrains": {"air": {"version": 1, "sessionFailure": {id, revision,
    /// category, severity, title, actions}}}}`. A warning offers no actions; the title is cut to
    /// the peer's 240 characters.
    pub fn air_meta(
        &self,
        kind: FailureKind,
        severity: Severity,
        title: &str,
    ) -> serde_json::Map<String, Value> {
        let (severity, actions) = match severity {
            Severity::Warning => ("warning", &[][..]),
            Severity::Error => ("error", kind.actions()),
        };
        let title = match title.char_indices().nth(MAX_TITLE_CHARS - 1) {
            Some((cut, _)) if title.chars().nth(MAX_TITLE_CHARS).is_some() => {
                format!("{}…", &title[..cut])
            }
            _ => title.to_owned(),
        };
        let failure = json!({
            "id": self.id,
            "revision": self.revision,
            "category": kind.category(),
            "severity": severity,
            "title": title,
            "actions": actions,
        });
        crate::capabilities::air_meta(AIR_SESSION_FAILURE, failure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_the_peers_category_and_actions() {
        let table = [
            (
                FailureKind::TransportLost,
                "connection",
                &["retry", "new_session"][..],
            ),
            (FailureKind::AuthRequired, "access", &["login"]),
            (FailureKind::RateLimited, "limit", &["retry"]),
            (FailureKind::QuotaExhausted, "limit", &[]),
            (FailureKind::Overloaded, "service", &["retry"]),
            (FailureKind::ContextExhausted, "limit", &["new_session"]),
            (FailureKind::BudgetExhausted, "limit", &["new_session"]),
            (FailureKind::PolicyDenied, "request", &[]),
            (FailureKind::BadRequest, "request", &[]),
            (FailureKind::ProviderError, "service", &["retry"]),
            (FailureKind::InternalError, "service", &["retry", "new_session"]),
        ];
        for (kind, category, actions) in table {
            assert_eq!(kind.category(), category, "{kind:?}");
            assert_eq!(kind.actions(), actions, "{kind:?}");
        }
        assert_eq!(
            serde_json::to_value(FailureKind::TransportLost).unwrap(),
            "transport_lost"
        );
    }

    #[test]
    fn a_warning_offers_no_actions_an_error_its_kinds_and_a_long_title_is_cut() {
        let incident = Incident {
            id: "t1-error".into(),
            revision: 2,
        };
        let warning = incident.air_meta(FailureKind::RateLimited, Severity::Warning, "slow down");
        assert_eq!(warning["jetbrains"]["air"]["version"], 1);
        assert_eq!(
            warning["jetbrains"]["air"]["sessionFailure"],
            json!({"id": "t1-error", "revision": 2, "category": "limit", "severity": "warning",
                "title": "slow down", "actions": []})
        );
        let long = "é".repeat(300);
        let error = incident.air_meta(FailureKind::RateLimited, Severity::Error, &long);
        let failure = &error["jetbrains"]["air"]["sessionFailure"];
        assert_eq!(failure["actions"], json!(["retry"]));
        assert_eq!(failure["severity"], "error");
        let title = failure["title"].as_str().unwrap();
        assert_eq!(title.chars().count(), 240);
        assert!(title.ends_with('…'));
        let short = "a".repeat(240);
        let kept = incident.air_meta(FailureKind::BadRequest, Severity::Error, &short);
        assert_eq!(
            kept["jetbrains"]["air"]["sessionFailure"]["title"],
            short.as_str()
        );
    }
}
