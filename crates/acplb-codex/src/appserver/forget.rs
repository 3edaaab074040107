//! A kept session's thread changed with it: deleted (`thread/delete`: Codex removes its saved
//! rollout), renamed (`thread/name/set`), archived or unarchived (`thread/archive`,
//! `thread/unarchive`: Codex moves its rollout to and from its archive).

use acplb_core::error::ProviderError;

use super::protocol::Request;
use super::protocol::requests::{ThreadArchive, ThreadDelete, ThreadNameSet, ThreadUnarchive};
use super::server::AppServer;

/// Asks `server` (started if need be) to delete thread `thread_id`.
pub(crate) async fn delete_thread(server: &AppServer, thread_id: &str) -> Result<(), ProviderError> {
    let params = ThreadDelete {
        thread_id: thread_id.to_owned(),
    };
    ask(server, &params, "delete", thread_id).await
}

/// Asks `server` to name thread `thread_id` `name`.
pub(crate) async fn rename_thread(
    server: &AppServer,
    thread_id: &str,
    name: &str,
) -> Result<(), ProviderError> {
    let params = ThreadNameSet {
        thread_id: thread_id.to_owned(),
        name: name.to_owned(),
    };
    ask(server, &params, "rename", thread_id).await
}

/// Asks `server` to archive (`archived`) or unarchive thread `thread_id`.
pub(crate) async fn archive_thread(
    server: &AppServer,
    thread_id: &str,
    archived: bool,
) -> Result<(), ProviderError> {
    let thread = thread_id.to_owned();
    if archived {
        ask(server, &ThreadArchive { thread_id: thread }, "archive", thread_id).await
    } else {
        ask(
            server,
            &ThreadUnarchive { thread_id: thread },
            "unarchive",
            thread_id,
        )
        .await
    }
}

async fn ask<R: Request>(
    server: &AppServer,
    params: &R,
    verb: &str,
    thread_id: &str,
) -> Result<(), ProviderError> {
    let conn = server.connect().await?;
    conn.rpc.request(params).await.map(drop).map_err(|failure| {
        ProviderError::turn_failed(format!(
            "codex app-server did not {verb} thread {thread_id}: {failure}"
        ))
    })
}
