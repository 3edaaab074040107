//! The `codex app-server` transport: one long-lived Codex shared by every session
//! (`server.rs`, which owns the process and its JSON-RPC peer and knows no session; its pipes in
//! `pipes.rs`), spoken to over JSON-RPC (`rpc/`, with the method table and typed requests of
//! `protocol/`) with a time limit on every request (`liveness.rs`). The adapter opens sessions
//! with `open_session`: each ACP session is a Codex thread (`session/`) whose notifications
//! are decoded into ACP updates ([`decode`], pure) and whose approval requests become
//! permission prompts ([`approval`], pure). What the server prints is redacted with the secrets
//! of every session it served (`served.rs`). It stands on the crate's floor and knows nothing
//! of `exec/`.

pub(crate) mod account;
mod air_patch;
pub mod approval;
mod async_questions;
mod binary;
mod commands;
mod config;
pub mod decode;
mod early;
mod edits;
mod failure;
pub(crate) mod forget;
mod goals;
pub(crate) mod hooks;
mod liveness;
mod mcp_form;
mod mcp_login;
mod mcp_status;
pub(crate) mod models;
mod pipes;
mod plan;
pub(crate) mod profiles;
mod protocol;
mod rpc;
mod served;
mod server;
mod session;
mod signal;
pub(crate) mod skills;
mod subagents;
pub(crate) mod terminals;
mod text;
mod tools;
mod turn_input;
mod user_input;
mod wire;

use acplb_core::provider::{ProviderCapabilities, ProviderSession, SessionSetup};
use acplb_core::session::options::OptionCatalog;

pub use server::AppServer;

/// A session on `server`; the server (if it is not running) and the session's thread start in
/// the background, so `session/new` is answered at once.
/// A skill invoked by a prompt reaches the turn through `picked`.
pub(crate) fn open_session(
    server: &AppServer,
    setup: SessionSetup,
    picked: crate::skills::Picked,
    gateway: Option<crate::routing::Gateway>,
) -> Box<dyn ProviderSession> {
    Box::new(session::AppSession::new(server.clone(), setup, picked, gateway))
}

/// What the app-server transport offers: it asks before acting, can be steered, accepts
/// MCP servers over stdio and HTTP, and has slash commands.
pub(crate) fn capabilities(mut catalog: OptionCatalog) -> ProviderCapabilities {
    use crate::render::air;
    catalog.asks = true;
    catalog.steer = true;
    catalog.refuses_plan = None;
    ProviderCapabilities {
        catalog,
        refuses_sse_mcp: Some(crate::options::SSE_REFUSAL.into()),
        commands: commands::available(),
        air: vec![
            air::DIFF_PATCH,
            air::RAW_INPUT_RENDERING,
            air::ASYNC_TASKS,
            air::PLAN_CONTENT_DELTA,
            acplb_core::capabilities::AIR_NATIVE_SUBAGENT_SESSIONS,
            crate::caller::AIR_INSTRUCTIONS,
        ],
    }
}
