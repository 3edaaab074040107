//! Stopping a cancelled turn's subagents: Codex's interrupt of the parent's turn is not
//! relied on to reach them, so each child's running turn is interrupted too, and the commands
//! of every child's thread are swept as the parent's are.

use crate::appserver::protocol::requests::TurnInterrupt;
use crate::appserver::rpc::Rpc;

/// Interrupts the running turn of each child in `threads` (thread, running turn) and kills the
/// commands left running on any of their threads (marked with the server's `marker`).
pub(crate) async fn stop(rpc: &Rpc, marker: &str, threads: Vec<(String, Option<String>)>) {
    for (thread_id, turn_id) in &threads {
        let Some(turn_id) = turn_id else { continue };
        let params = TurnInterrupt {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
        };
        // An interrupt refused (the child just ended) or unanswered changes nothing here.
        if let Err(e) = rpc.request(&params).await {
            tracing::debug!(error = %e, "interrupting a subagent's turn failed");
        }
    }
    for (thread_id, _) in threads {
        let entry = format!("CODEX_THREAD_ID={thread_id}");
        let killed = acplb_core::transport::kill_marked_with(marker.to_owned(), entry).await;
        if killed > 0 {
            tracing::debug!(killed, "stopped a cancelled subagent's commands");
        }
    }
}
