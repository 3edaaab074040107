//! Stopping a cancelled turn's subagents: Codex's interrupt of the parent's turn is not
//! relied on to reach them, so each child's running turn is interrupted too, and the commands
//! of every child's thread are swept as the parent's are.

use std::time::Duration;

use crate::appserver::protocol::requests::TurnInterrupt;
use crate::appserver::rpc::Rpc;

/// How long the children's interrupts (sent all at once) are waited for before their commands
/// are swept anyway: a cancel is answered within a second, whatever Codex does.
const STOP_WAIT: Duration = Duration::from_millis(500);

/// Interrupts the running turn of each child in `threads` (thread, running turn), waiting at
/// most [`STOP_WAIT`] for Codex to confirm, and kills the commands left running on any of their
/// threads (marked with the server's `marker`).
pub(crate) async fn stop(rpc: &Rpc, marker: &str, threads: Vec<(String, Option<String>)>) {
    let interrupts = threads.iter().filter_map(|(thread_id, turn_id)| {
        let params = TurnInterrupt {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone()?,
        };
        Some(async move {
            // An interrupt refused (the child just ended) changes nothing here.
            if let Err(e) = rpc.request(&params).await {
                tracing::debug!(error = %e, "interrupting a subagent's turn failed");
            }
        })
    });
    if tokio::time::timeout(STOP_WAIT, futures::future::join_all(interrupts))
        .await
        .is_err()
    {
        tracing::warn!(wait = ?STOP_WAIT, "codex did not confirm a subagent's interrupt in time; its commands are stopped anyway");
    }
    for (thread_id, _) in threads {
        let entry = format!("CODEX_THREAD_ID={thread_id}");
        let killed = acplb_core::transport::kill_marked_with(marker.to_owned(), entry).await;
        if killed > 0 {
            tracing::debug!(killed, "stopped a cancelled subagent's commands");
        }
    }
}
