//! `auth/status_update` (unstable ACP, ADR 0043): the client is told when who is signed in
//! changes, after acplb's own `authenticate` and `logout` and when the provider notices a
//! change of its own (another sign-in, a sign-out elsewhere). One task per connection asks the
//! provider, in order, and sends only a status that differs from the last one it sent; the first
//! status is not pushed (a client asks `auth/status`), so no Codex starts for a client that
//! never signs in.

use std::rc::Rc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{AuthState, AuthStatusResponse, AuthStatusUpdateNotification};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;

use crate::provider::ProviderAdapter;

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
        let update =
            AuthStatusUpdateNotification::new(status.state.clone()).accounts(status.accounts.clone());
        if let Err(e) = cx.send_notification(update) {
            tracing::debug!(error = %e, "the client is gone; auth status watcher stops");
            return;
        }
        tracing::info!(state = ?status.state, "auth status update sent");
        last = Some(status);
    }
}
