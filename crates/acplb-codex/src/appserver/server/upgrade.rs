//! Replacing a server whose Codex binary changed on disk (an upgrade) at a connect that finds
//! it idle (ADR 0031); sessions resume their threads on the new one.

use super::super::binary;
use super::{AppServer, Conn, stop};

impl AppServer {
    /// Whether the running server was just taken out because the Codex binary it started from
    /// changed on disk and it is idle (no turn runs, no request waits): the caller starts the
    /// new one, and the old one is stopped behind. A binary that cannot be read now (gone
    /// mid-upgrade) keeps the server.
    pub(super) async fn replaced_if_outdated(&self, conn: &Conn) -> bool {
        if !conn.rpc.idle() {
            return false;
        }
        let started = {
            let running = self.inner.running.borrow();
            running
                .as_ref()
                .filter(|r| r.conn.generation == conn.generation)
                .and_then(|r| r.stamp.clone())
        };
        let Some(started) = started else { return false };
        let Some(now) = binary::stamp(&self.inner.options.program).await else {
            return false;
        };
        // Looked at again after the wait: the same server, still idle.
        let same = self.live().is_some_and(|c| c.generation == conn.generation);
        if now == started || !same || !conn.rpc.idle() {
            return false;
        }
        tracing::info!(
            generation = conn.generation,
            codex = %self.inner.options.program.display(),
            "codex changed on disk; replacing the idle app-server (threads resume on the new one)"
        );
        let running = self.inner.running.borrow_mut().take();
        if let Some(running) = running {
            tokio::task::spawn_local(stop(running));
        }
        true
    }
}
