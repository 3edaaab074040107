//! A deleted session's thread deleted too (`thread/delete`: Codex removes its saved rollout).

use acplb_core::error::ProviderError;

use super::protocol::requests::ThreadDelete;
use super::server::AppServer;

/// Asks `server` (started if need be) to delete thread `thread_id`.
pub(crate) async fn delete_thread(server: &AppServer, thread_id: &str) -> Result<(), ProviderError> {
    let conn = server.connect().await?;
    let params = ThreadDelete {
        thread_id: thread_id.to_owned(),
    };
    conn.rpc
        .request(&params)
        .await
        .map(drop)
        .map_err(|failure| ProviderError::TurnFailed {
            message: format!("codex app-server did not delete thread {thread_id}: {failure}"),
        })
}
