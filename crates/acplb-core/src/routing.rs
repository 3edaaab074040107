//! Where a provider's model is reached, as an editor may set it (ACP's unstable `providers/*`:
//! `providers/list`, `providers/set`, `providers/disable`). The runtime only answers the
//! requests; a provider that offers this says so with [`crate::provider::ProviderAdapter::routing`].
//! What a client sets here can hold credentials (its headers): a provider keeps it in memory
//! only and treats every header value as a secret.

use agent_client_protocol::v1::schema::{ProviderId, ProviderInfo, SetProviderRequest};

/// A provider's model routing, set by the editor.
pub trait ModelRouting {
    /// The providers the editor can configure, with what each uses now (never a header value).
    fn list(&self) -> Vec<ProviderInfo>;

    /// Routes provider `req.provider_id` as the request says, for sessions opened after it;
    /// `Err` says why not (the request's own fault: an unknown id, a protocol or URL it cannot
    /// take).
    fn set(&self, req: &SetProviderRequest) -> Result<(), String>;

    /// Disables provider `id`; `Err` says why not (unknown, or required).
    fn disable(&self, id: &ProviderId) -> Result<(), String>;
}
