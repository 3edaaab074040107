//! `_auth/status_update` (ADR 0043): the client is told when who is signed in changes, after
//! acplb's own successful `authenticate` and `logout` and when the provider notices a change of
//! its own (another sign-in, a sign-out elsewhere). One task per connection asks the provider, in
//! order, and sends only a status that differs from the last one it sent; the first status is not
//! pushed (a client asks `auth/status`), so no Codex starts for a client that never signs in.
//!
//! The method is the TS codex-acp's vendor one, with its `authStatus` (`kind`, `label`,
//! `account`) beside ACP's draft fields (`state`, `accounts`): ACP's own `auth/status_update` is
//! a draft that v1 clients and the conformance kit reject as an unknown method.

use std::rc::Rc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{AuthState, AuthStatusResponse};
use agent_client_protocol::{Client, UntypedMessage};
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use crate::provider::ProviderAdapter;

/// The notification's method.
pub(super) const METHOD: &str = "_auth/status_update";

/// The `_meta` key of `agentCapabilities.auth` saying acplb sends it (as the TS peer says).
pub(super) const META_KEY: &str = "authStatus";

/// `agentCapabilities.auth._meta`: `{"authStatus": {}}`, "this agent pushes `_auth/status_update`".
pub(super) fn capability_meta() -> serde_json::Map<String, Value> {
    let mut meta = serde_json::Map::new();
    meta.insert(META_KEY.to_owned(), json!({}));
    meta
}

/// Who is signed in, in the TS peer's terms.
pub(super) enum Signed<'a> {
    ApiKey(&'a str),
    /// A ChatGPT account: its label and email.
    Account(&'a str, Option<&'a str>),
    /// Signed in some other way: its label.
    External(&'a str),
    /// No OpenAI sign-in is needed (a custom model provider).
    Gateway,
    Nobody,
}

impl<'a> Signed<'a> {
    pub(super) fn of(status: &'a AuthStatusResponse) -> Self {
        let account = status.accounts.iter().find(|a| a.active != Some(false));
        match (&status.state, account) {
            (AuthState::Authenticated, Some(a)) if a.label == "OpenAI API key" => Self::ApiKey(&a.label),
            (AuthState::Authenticated, Some(a)) if a.email.is_some() || a.label == "ChatGPT" => {
                Self::Account(&a.label, a.email.as_deref())
            }
            (AuthState::Authenticated, Some(a)) => Self::External(&a.label),
            (AuthState::Authenticated, None) => Self::External("Signed in"),
            (AuthState::NotRequired, _) => Self::Gateway,
            _ => Self::Nobody,
        }
    }
}

/// The notification's params: the TS peer's `authStatus` and ACP's draft fields.
fn params(status: &AuthStatusResponse) -> Value {
    let peer = match Signed::of(status) {
        Signed::ApiKey(label) => json!({ "kind": "api_key", "label": label }),
        Signed::Account(label, email) => {
            json!({ "kind": "account", "label": label, "account": { "email": email } })
        }
        Signed::External(label) => json!({ "kind": "external", "label": label }),
        Signed::Gateway => json!({ "kind": "gateway", "label": "Custom model gateway" }),
        Signed::Nobody => json!({ "kind": "none", "label": "Not logged in" }),
    };
    json!({ "authStatus": peer, "state": status.state, "accounts": status.accounts })
}

/// Pokes the watcher of one connection: "the sign-in may have changed, look again".
#[derive(Debug, Clone)]
pub(super) struct AuthPoke(UnboundedSender<()>);

impl AuthPoke {
    /// Asks the watcher to look again; a watcher that has stopped (the client is gone) is
    /// nobody's loss.
    pub(super) fn poke(&self) {
        if self.0.send(()).is_err() {
            tracing::trace!("auth status watcher gone; nothing to tell");
        }
    }
}

/// Starts the watcher for the client on `cx`; it ends when every [`AuthPoke`] is dropped or
/// the client is gone.
pub(super) fn start(provider: Rc<dyn ProviderAdapter>, cx: ConnectionTo<Client>) -> AuthPoke {
    let (tx, rx) = unbounded_channel();
    let changes = provider.auth_changes();
    tokio::task::spawn_local(watch_loop(provider, cx, rx, changes));
    AuthPoke(tx)
}

async fn watch_loop(
    provider: Rc<dyn ProviderAdapter>,
    cx: ConnectionTo<Client>,
    mut pokes: UnboundedReceiver<()>,
    mut changes: Option<watch::Receiver<u64>>,
) {
    let mut last: Option<AuthStatusResponse> = None;
    loop {
        let noticed = async {
            match changes.as_mut() {
                Some(rx) => rx.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            poke = pokes.recv() => if poke.is_none() { return },
            alive = noticed => if !alive { changes = None; continue },
        }
        // Several pokes waiting are one look.
        while pokes.try_recv().is_ok() {}
        let status = match provider.auth_status().await {
            Ok(status) => status,
            Err(e) => {
                tracing::debug!(error = %e, "auth status not read; no update sent");
                continue;
            }
        };
        if status.state == AuthState::Unknown || last.as_ref() == Some(&status) {
            continue;
        }
        let sent = UntypedMessage::new(METHOD, params(&status)).and_then(|n| cx.send_notification(n));
        if let Err(e) = sent {
            tracing::debug!(error = %e, "the client is gone; auth status watcher stops");
            return;
        }
        tracing::info!(state = ?status.state, "auth status update sent");
        last = Some(status);
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::AuthAccount;

    use super::*;

    #[test]
    fn params_carry_the_peers_shape_and_acps() {
        let key = AuthStatusResponse::new(AuthState::Authenticated)
            .accounts(vec![AuthAccount::new("OpenAI API key").active(true)]);
        let p = params(&key);
        assert_eq!(
            p["authStatus"],
            json!({ "kind": "api_key", "label": "OpenAI API key" })
        );
        assert_eq!(p["state"], "authenticated");
        assert_eq!(p["accounts"][0]["label"], "OpenAI API key");
        let chatgpt = AuthStatusResponse::new(AuthState::Authenticated)
            .accounts(vec![AuthAccount::new("ChatGPT").email("a@b.c".to_owned())]);
        assert_eq!(params(&chatgpt)["authStatus"]["account"]["email"], "a@b.c");
        let none = params(&AuthStatusResponse::new(AuthState::Unauthenticated));
        assert_eq!(none["authStatus"]["kind"], "none");
        let own = params(&AuthStatusResponse::new(AuthState::NotRequired));
        assert_eq!(own["authStatus"]["kind"], "gateway");
    }
}
