//! What a turn of `codex app-server` tells the caller beyond updates: that it started, how it
//! ended (a failure says whether it was an authentication error), the thread's token totals
//! and name.

use serde::Serialize;
use serde_json::Value;

use super::wire;
use crate::render::usage::Totals;

/// A turn-level fact the caller acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "signal", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AppSignal {
    /// `turn/started`: the id `turn/interrupt` and `turn/steer` need.
    TurnStarted {
        /// Codex's turn id.
        turn_id: String,
    },
    /// `turn/completed`: the turn is over (every tool call still open was closed).
    TurnCompleted {
        /// Codex's turn id.
        turn_id: String,
        /// How it ended.
        end: TurnEnd,
    },
    /// `thread/tokenUsage/updated`: the thread's cumulative totals.
    Totals(Totals),
    /// `thread/name/updated`: Codex's name for the thread.
    ThreadName(String),
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TurnEnd {
    /// Normally.
    Completed,
    /// By `turn/interrupt`.
    Interrupted,
    /// With an error.
    Failed {
        /// Codex's message.
        message: String,
        /// Whether it was an authentication error (HTTP 401, `unauthorized`).
        auth_required: bool,
    },
}

/// A failed turn's end: Codex's message (with its details) and whether it was a 401.
pub(super) fn failure(error: wire::TurnError) -> TurnEnd {
    let auth_required =
        is_unauthorized(error.codex_error_info.as_ref()) || crate::outcome::is_auth_error(&error.message);
    let message = match error.additional_details.filter(|d| !d.is_empty()) {
        Some(details) => format!("{} ({details})", error.message),
        None => error.message,
    };
    TurnEnd::Failed {
        message,
        auth_required,
    }
}

/// `"unauthorized"`, or any `{"<kind>": {"httpStatusCode": 401}}`.
fn is_unauthorized(info: Option<&Value>) -> bool {
    match info {
        Some(Value::String(kind)) => kind == "unauthorized",
        Some(Value::Object(map)) => map
            .values()
            .any(|v| v.get("httpStatusCode").and_then(Value::as_u64) == Some(401)),
        _ => false,
    }
}
