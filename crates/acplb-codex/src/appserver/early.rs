//! A session's Codex thread started in the background when the session opens, so the first
//! prompt finds it ready (as `session/new` does not wait for it, the editor never does either).
//!
//! It starts with what the session knows at `session/new` (its workspace, MCP servers, plugin
//! environment and session-wide instructions, the default mode); the first turn brings its own
//! mode and model with `turn/start` and its plugin instructions as developer messages.

use serde_json::Value;
use tokio::task::JoinHandle;

use super::protocol::requests::ThreadStart;
use super::rpc::Inbox;
use super::server::AppServer;

/// A thread that was started before the first prompt.
#[derive(Debug)]
pub(crate) struct Early {
    /// The server generation it lives on.
    pub(crate) generation: u64,
    pub(crate) id: String,
    pub(crate) inbox: Inbox,
    /// The `thread/start` request and its result, for the first turn's transcript.
    pub(crate) request: ThreadStart,
    pub(crate) result: Value,
}

/// Starts the thread with `params` in the background.
pub(crate) fn start(server: AppServer, params: ThreadStart) -> JoinHandle<Option<Early>> {
    tokio::task::spawn_local(async move {
        let conn = match server.connect().await {
            Ok(conn) => conn,
            Err(e) => {
                // The first prompt tries again and shows the error.
                tracing::warn!(error = %e, "starting codex app-server failed");
                return None;
            }
        };
        let result = match conn.rpc.request(&params).await {
            Ok(result) => result,
            Err(e) => {
                tracing::debug!(error = %e, "starting the session's thread early failed; the first prompt starts it");
                return None;
            }
        };
        let id = result.pointer("/thread/id").and_then(Value::as_str)?.to_owned();
        let inbox = conn.rpc.subscribe(&id);
        Some(Early {
            generation: conn.generation,
            id,
            inbox,
            request: params,
            result,
        })
    })
}
