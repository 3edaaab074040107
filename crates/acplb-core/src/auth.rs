//! Signing in and out (ACP `authenticate` and `logout`), as the runtime and a provider share
//! them: what a provider may ask of the editor while it signs the user in ([`SignInUi`]: show a
//! web page and a code), and how a sign-in fails ([`AuthFailure`]).
//!
//! The runtime knows no provider's ways in: it asks the provider which to advertise
//! (`ProviderAdapter::auth_methods`), hands `authenticate` and `logout` to it, and turns an
//! [`AuthFailure`] into the JSON-RPC error (`wire`).

use futures::future::LocalBoxFuture;
use serde_json::Value;

/// What the editor may do for a sign-in: open a web page for the user (ACP URL-mode
/// elicitation) and hear that the sign-in behind it finished.
pub trait SignInUi {
    /// Whether the client takes URL-mode elicitation; when not, a provider tells the user the
    /// page and code in its error instead (see [`AuthFailure::ActionNeeded`]).
    fn can_open_url(&self) -> bool;

    /// Asks the editor to show `url` with `message` (which says what to enter there); resolves
    /// with the user's answer. Only called when [`SignInUi::can_open_url`] says so.
    fn open_url(&self, url: &str, message: &str) -> LocalBoxFuture<'_, UrlAnswer>;

    /// The sign-in the page was for has finished (`elicitation/complete`), so the editor may
    /// close what it showed.
    fn completed(&self);

    /// Resolves when the client cancels the `authenticate` request (`$/cancel_request`); a
    /// provider then stops the sign-in. Pending forever when it never does.
    fn cancelled(&self) -> LocalBoxFuture<'_, ()>;
}

/// The user's answer to a page the editor showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlAnswer {
    /// The user went to the page (the sign-in goes on there).
    Accepted,
    /// The user declined or dismissed it.
    Declined,
    /// The client answered with an error or went away; the text says why.
    Failed(String),
}

/// Why `authenticate` or `logout` did not succeed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFailure {
    /// The method id is not one acplb advertised.
    #[error("unknown authentication method `{method}`; this agent offers: {}", .known.join(", "))]
    UnknownMethod {
        /// The id the client sent.
        method: String,
        /// The ids it may send.
        known: Vec<String>,
    },
    /// The request is missing what the method needs (an API key), or it is unusable.
    #[error("{0}")]
    InvalidParams(String),
    /// The user must do something before the sign-in can finish (enter a code on a web page):
    /// the message says what; `data` repeats it for the client (`verificationUrl`, `userCode`).
    #[error("{message}")]
    ActionNeeded {
        /// What to do, with the page and the code.
        message: String,
        /// The same, as fields.
        data: Value,
    },
    /// The sign-in or sign-out ended without success (declined, cancelled, expired, refused).
    #[error("{0}")]
    Failed(String),
}

/// No UI at all: a client that cannot show pages (tests, `playback`).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoUi;

impl SignInUi for NoUi {
    fn can_open_url(&self) -> bool {
        false
    }

    fn open_url(&self, _url: &str, _message: &str) -> LocalBoxFuture<'_, UrlAnswer> {
        Box::pin(std::future::ready(UrlAnswer::Failed(
            "this client cannot open pages".into(),
        )))
    }

    fn completed(&self) {}

    fn cancelled(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(std::future::pending())
    }
}
