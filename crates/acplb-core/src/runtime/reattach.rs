//! `session/load` and `session/resume` of a session that is open in this acplb: nothing is
//! reopened; the open session answers with what it is set to, a load first replays its journal
//! (while the session's new updates wait, so the client sees them after the history), and a
//! turn in flight goes on. acplb serves one client, so the caller is the one it is attached to.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{SessionId, SessionNotification, SessionUpdate};

use super::open::Reply;
use super::store::Store;
use crate::error::Reason;
use crate::error::wire;
use crate::session::SessionMsg;
use crate::session::sink::send_counted;
use crate::sessions::journal;

impl Store {
    /// Reattaches the open session `id` to a load or resume of it.
    pub(super) fn reattach(
        &mut self,
        id: SessionId,
        cwd: &std::path::Path,
        reply: Reply,
        cx: ConnectionTo<Client>,
    ) {
        if let Err(e) = self.check_request(cwd, &[], &reply) {
            reply.error(e);
            return;
        }
        let Some(handle) = self.sessions.get(&id) else {
            return reply.error(wire::unknown_session(&id.to_string()));
        };
        let replays = reply.replays();
        let (answer, attached) = tokio::sync::oneshot::channel();
        if handle
            .tx
            .send(SessionMsg::Reattach {
                hold: replays,
                answer,
            })
            .is_err()
        {
            return reply.error(wire::internal(
                Reason::SessionStopped,
                "this session has stopped; start a new session",
            ));
        }
        let shows_notices = self.client.session.as_ref().is_some_and(|s| s.notices.is_some());
        let terminals = crate::capabilities::terminal_output(&self.client);
        let compaction = crate::capabilities::compaction(&self.client);
        let plans = (
            crate::capabilities::plan_updates(&self.client),
            crate::capabilities::plan_deltas(&self.client),
        );
        let flow = self.options.output_flow.clone();
        let mailbox = handle.tx.clone();
        tokio::task::spawn_local(async move {
            let Ok(attached) = attached.await else {
                return reply.error(wire::internal(
                    Reason::SessionStopped,
                    "this session has stopped; start a new session",
                ));
            };
            if replays {
                let history = match attached.journal {
                    Some((path, bytes)) => read_history(&id, path, bytes, shows_notices, terminals).await,
                    None => Ok(Vec::new()),
                };
                let history = if compaction {
                    history
                } else {
                    history.map(|updates| journal::without_compaction(updates, shows_notices))
                };
                let history = history.map(|updates| journal::plans_for(updates, plans.0, plans.1));
                let replayed = history.map(|updates| {
                    tracing::info!(session = %id, updates = updates.len(), "replaying the open session's history");
                    for update in updates {
                        send_counted(&cx, &flow, SessionNotification::new(id.clone(), update));
                    }
                });
                // The session's own updates since the journal was read go out after the replay.
                if mailbox.send(SessionMsg::Replayed).is_err() {
                    tracing::debug!(session = %id, "the session stopped during its replay");
                }
                if let Err(e) = replayed {
                    return reply.error(e);
                }
            }
            tracing::info!(session = %id, "the open session was {}", if replays { "loaded again" } else { "resumed" });
            reply.ok(id, attached.modes, attached.options);
        });
    }
}

/// The updates in the first `bytes` bytes of the journal at `path`, read on the blocking pool.
async fn read_history(
    id: &SessionId,
    path: std::path::PathBuf,
    bytes: u64,
    shows_notices: bool,
    terminals: bool,
) -> Result<Vec<SessionUpdate>, agent_client_protocol::Error> {
    let id = id.to_string();
    let read = tokio::task::spawn_blocking(move || -> Result<Vec<SessionUpdate>, String> {
        use std::io::Read as _;
        let file = std::fs::File::open(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut text = Vec::new();
        file.take(bytes)
            .read_to_end(&mut text)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let history = journal::parse(&path, &text).map_err(|e| e.to_string())?;
        for skipped in &history.skipped {
            tracing::warn!(session = %id, "journal {}: {skipped}", path.display());
        }
        Ok(journal::updates(&history, shows_notices, terminals))
    });
    match read.await {
        Ok(Ok(updates)) => Ok(updates),
        Ok(Err(why)) => Err(wire::internal(
            Reason::Storage,
            &format!("reading the session failed: {why}"),
        )),
        Err(e) => Err(wire::internal(
            Reason::Internal,
            &format!("reading the session failed: {e}"),
        )),
    }
}
