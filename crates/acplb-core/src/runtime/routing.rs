//! `providers/list`, `providers/set` and `providers/disable` (ACP, unstable): answered from the
//! provider's [`ModelRouting`](crate::routing::ModelRouting), at once (nothing here waits).

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    DisableProviderRequest, DisableProviderResponse, ListProvidersResponse, SetProviderRequest,
    SetProviderResponse,
};

use super::store::Store;
use crate::error::Reason;
use crate::error::wire::{self, reply};

/// One `providers/*` request.
pub(super) enum RoutingCall {
    List(Responder<ListProvidersResponse>),
    Set(Box<SetProviderRequest>, Responder<SetProviderResponse>),
    Disable(DisableProviderRequest, Responder<DisableProviderResponse>),
}

/// Never shows a header value (they are secrets).
impl std::fmt::Debug for RoutingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoutingCall::List(_) => f.write_str("providers/list"),
            RoutingCall::Set(req, _) => write!(f, "providers/set {} {}", req.provider_id, req.base_url),
            RoutingCall::Disable(req, _) => write!(f, "providers/disable {}", req.provider_id),
        }
    }
}

/// What a client without the provider's say gets: this agent routes nothing.
const NO_ROUTING: &str =
    "this agent has no model providers to configure (`agentCapabilities.providers` is not offered)";

impl Store {
    pub(super) fn routing(&self, call: RoutingCall) {
        let Some(routing) = self.provider.routing() else {
            let refuse = || agent_client_protocol::Error::method_not_found().data(NO_ROUTING);
            match call {
                RoutingCall::List(r) => reply(r.respond_with_error(refuse())),
                RoutingCall::Set(_, r) => reply(r.respond_with_error(refuse())),
                RoutingCall::Disable(_, r) => reply(r.respond_with_error(refuse())),
            }
            return;
        };
        match call {
            RoutingCall::List(r) => reply(r.respond(ListProvidersResponse::new(routing.list()))),
            RoutingCall::Set(req, r) => match routing.set(&req) {
                Ok(()) => {
                    // Only the id and where it goes: header values are secrets.
                    tracing::info!(provider = %req.provider_id, base_url = %req.base_url, headers = req.headers.len(), "model provider set by the editor");
                    reply(r.respond(SetProviderResponse::new()));
                }
                Err(why) => reply(r.respond_with_error(wire::invalid_params(Reason::InvalidParams, why))),
            },
            RoutingCall::Disable(req, r) => match routing.disable(&req.provider_id) {
                Ok(()) => reply(r.respond(DisableProviderResponse::new())),
                Err(why) => reply(r.respond_with_error(wire::invalid_params(Reason::InvalidParams, why))),
            },
        }
    }
}
