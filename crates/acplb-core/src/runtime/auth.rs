//! `authenticate` and `logout`: handed to the provider off the runtime loop (a sign-in may
//! wait minutes for the user), with the editor as the [`SignInUi`] through which a page and a
//! code reach the user (URL-mode `elicitation/create`, then `elicitation/complete`).

use agent_client_protocol::Client;
use agent_client_protocol::v1::schema::{
    AuthStatusResponse, AuthenticateRequest, AuthenticateResponse, ClientCapabilities,
    CompleteElicitationNotification, CreateElicitationRequest, ElicitationAction, ElicitationId,
    ElicitationRequestScope, ElicitationUrlMode, LogoutResponse, RequestId,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use futures::future::LocalBoxFuture;

use super::store::Store;
use crate::auth::{SignInUi, UrlAnswer};
use crate::error::wire;
use crate::error::wire::reply;

impl Store {
    /// `authenticate`: the provider signs the user in with the chosen method; the request is
    /// answered when it has (or failed). Other requests go on meanwhile.
    pub(super) fn authenticate(
        &self,
        req: AuthenticateRequest,
        responder: Responder<AuthenticateResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let provider = self.provider.clone();
        let ui = EditorUi {
            cx,
            cancellation: responder.cancellation(),
            request: responder.id().clone(),
            elicitation: ElicitationId::new(uuid::Uuid::new_v4().to_string()),
            opens_urls: opens_urls(&self.client),
        };
        let method = req.method_id.to_string();
        let meta = req.meta.unwrap_or_default();
        let poke = self.auth_poke.clone();
        tokio::task::spawn_local(async move {
            match provider.authenticate(&method, &meta, &ui).await {
                Ok(()) => {
                    tracing::info!(method, "signed in");
                    // The client hears of the new sign-in; a failed one changed nothing.
                    poke.iter().for_each(super::auth_updates::AuthPoke::poke);
                    reply(responder.respond(AuthenticateResponse::new()));
                }
                Err(e) => {
                    tracing::info!(method, error = %e, "sign-in did not succeed");
                    reply(responder.respond_with_error(wire::auth(&e)));
                }
            }
        });
    }

    /// `auth/status`: the provider says who is signed in.
    pub(super) fn auth_status(&self, responder: Responder<AuthStatusResponse>) {
        let provider = self.provider.clone();
        tokio::task::spawn_local(async move {
            match provider.auth_status().await {
                Ok(status) => reply(responder.respond(status)),
                Err(e) => reply(responder.respond_with_error(wire::auth(&e))),
            }
        });
    }

    /// `logout`: the provider signs the user out.
    pub(super) fn logout(&self, responder: Responder<LogoutResponse>) {
        let provider = self.provider.clone();
        let poke = self.auth_poke.clone();
        tokio::task::spawn_local(async move {
            match provider.logout().await {
                Ok(()) => {
                    tracing::info!("signed out");
                    poke.iter().for_each(super::auth_updates::AuthPoke::poke);
                    reply(responder.respond(LogoutResponse::new()));
                }
                Err(e) => reply(responder.respond_with_error(wire::auth(&e))),
            }
        });
    }
}

/// Whether the client declared URL-mode elicitation.
fn opens_urls(client: &ClientCapabilities) -> bool {
    client.elicitation.as_ref().is_some_and(|e| e.url.is_some())
}

/// The editor of one `authenticate` request, scoping what it shows to that request.
struct EditorUi {
    cx: ConnectionTo<Client>,
    cancellation: agent_client_protocol::RequestCancellation,
    request: RequestId,
    elicitation: ElicitationId,
    opens_urls: bool,
}

impl SignInUi for EditorUi {
    fn can_open_url(&self) -> bool {
        self.opens_urls
    }

    fn open_url(&self, url: &str, message: &str) -> LocalBoxFuture<'_, UrlAnswer> {
        let mode = ElicitationUrlMode::new(
            ElicitationRequestScope::new(self.request.clone()),
            self.elicitation.clone(),
            url,
        );
        let sent = self.cx.send_request(CreateElicitationRequest::new(mode, message));
        Box::pin(async move {
            match sent.block_task().await {
                Ok(answer) => match answer.action {
                    ElicitationAction::Accept(_) => UrlAnswer::Accepted,
                    _ => UrlAnswer::Declined,
                },
                Err(e) => UrlAnswer::Failed(e.message),
            }
        })
    }

    fn completed(&self) {
        if let Err(e) = self
            .cx
            .send_notification(CompleteElicitationNotification::new(self.elicitation.clone()))
        {
            tracing::debug!(error = %e, "the client is gone; elicitation/complete not sent");
        }
    }

    fn cancelled(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(self.cancellation.cancelled())
    }
}
