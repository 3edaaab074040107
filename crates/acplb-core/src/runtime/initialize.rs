//! `initialize`: what acplb offers the client, from the provider's capabilities and whether
//! sessions are kept (durable); protocol v1 whatever newer version the client asks for. A
//! provider that offers sign-in also gets the client told of sign-in changes (`auth_updates.rs`).

use agent_client_protocol::Client;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthStatusCapabilities, Implementation, InitializeRequest,
    InitializeResponse, LogoutCapabilities, McpCapabilities, PromptCapabilities, ProvidersCapabilities,
    SessionAdditionalDirectoriesCapabilities, SessionCapabilities, SessionCloseCapabilities,
    SessionDeleteCapabilities, SessionListCapabilities, SessionResumeCapabilities,
    SessionSystemPromptCapabilities,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};

use super::store::Store;
use crate::error::wire::reply;

impl Store {
    pub(super) fn initialize(
        &mut self,
        req: &InitializeRequest,
        responder: Responder<InitializeResponse>,
        cx: ConnectionTo<Client>,
    ) {
        self.client = req.client_capabilities.clone();
        let sse = self.capabilities.refuses_sse_mcp.is_none();
        let durable = self.options.durability.is_some();
        let mut sessions = SessionCapabilities::new()
            .close(SessionCloseCapabilities::new())
            .system_prompt(SessionSystemPromptCapabilities::new())
            .additional_directories(SessionAdditionalDirectoriesCapabilities::new());
        if durable {
            sessions = sessions
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .delete(SessionDeleteCapabilities::new());
            sessions = super::shelf::capabilities(sessions);
        }
        let caps = AgentCapabilities::new()
            .load_session(durable)
            .session_capabilities(sessions)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true).sse(sse));
        // `_session/goal` (ADR 0045), for every client, when the provider offers goals.
        let caps = if super::goal::offered(&self.capabilities.commands) {
            let mut meta = serde_json::Map::new();
            meta.insert("goal".into(), super::goal::capability_meta());
            caps.meta(meta)
        } else {
            caps
        };
        let caps = match self.provider.routing() {
            Some(_) => caps.providers(ProvidersCapabilities::new()),
            None => caps,
        };
        let auth_methods = self.provider.auth_methods(&self.client);
        let caps = if auth_methods.is_empty() {
            caps
        } else {
            self.auth_poke = Some(super::auth_updates::start(self.provider.clone(), cx));
            caps.auth(
                AgentAuthCapabilities::new()
                    .logout(LogoutCapabilities::new())
                    .status(AuthStatusCapabilities::new())
                    .meta(super::auth_updates::capability_meta()),
            )
        };
        let version = if req.protocol_version > ProtocolVersion::V1 {
            ProtocolVersion::V1
        } else {
            req.protocol_version
        };
        reply(
            responder.respond(
                InitializeResponse::new(version)
                    .agent_capabilities(caps)
                    .meta(super::vendor::initialize_meta(
                        self.capabilities.catalog.steer,
                        super::goal::offered(&self.capabilities.commands),
                        &self.capabilities.air,
                        &self.client,
                    ))
                    .auth_methods(auth_methods)
                    .agent_info(Implementation::new(
                        &self.options.agent_name,
                        &self.options.agent_version,
                    )),
            ),
        );
    }
}
