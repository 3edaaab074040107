//! Telling the editor when the session's journal cannot record it (a full disk, say): a
//! warning when records start being lost and when writing works again, and a turn that lost
//! records answered as such (a warning before the answer, `_meta."acplb/unrecorded"` on it), so
//! no prompt is answered as if `session/load` could show it again when it cannot.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{Meta, SessionId, SessionNotification, SessionUpdate};

use super::SessionActor;
use crate::sessions::journal::{self, JournalNews, Listener};

/// The `_meta` key of a prompt's answer giving how many records of its turn were lost.
const UNRECORDED: &str = "acplb/unrecorded";

/// What the journal tells the session, sent straight to the editor: not through the journal,
/// which is what fails.
pub(super) fn listener(cx: ConnectionTo<Client>, id: SessionId, shows_notices: bool) -> Listener {
    Box::new(move |news: &JournalNews| {
        let update = match news {
            JournalNews::Failing { error } => journal::warning(
                "This session is not being recorded",
                &format!(
                    "acplb cannot write the session journal ({error}), so what happens now will be missing from session/load; it tries again with each new record."
                ),
                shows_notices,
            ),
            JournalNews::Recovered { lost } => journal::warning(
                "This session is recorded again",
                &format!(
                    "{lost} {} lost meanwhile; the journal marks where.",
                    records(*lost)
                ),
                shows_notices,
            ),
        };
        send(&cx, &id, update);
    })
}

impl SessionActor {
    /// Records lost since the journal had lost `before`; when some were, the editor is warned
    /// that the turn is not fully recorded and the answer's `_meta` to add is returned.
    pub(super) fn unrecorded(&self, before: u64) -> Option<Meta> {
        let lost = self.journal.as_ref()?.lost().saturating_sub(before);
        if lost == 0 {
            return None;
        }
        tracing::warn!(session = %self.id, lost, "the turn is not fully recorded in the journal");
        let update = journal::warning(
            "This turn was not fully recorded",
            &format!(
                "{lost} {} of this turn could not be written to the session journal; session/load will not show all of it.",
                if lost == 1 { "record" } else { "records" }
            ),
            self.shows_notices(),
        );
        send(&self.cx, &self.id, update);
        let mut meta = Meta::new();
        meta.insert(UNRECORDED.into(), lost.into());
        Some(meta)
    }

    /// How many records the journal lost so far (0 when the session is not kept).
    pub(super) fn lost_so_far(&self) -> u64 {
        self.journal.as_ref().map_or(0, |j| j.lost())
    }
}

fn records(n: u64) -> &'static str {
    if n == 1 { "record was" } else { "records were" }
}

fn send(cx: &ConnectionTo<Client>, id: &SessionId, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(id.clone(), update)) {
        tracing::debug!(error = %e, "dropping a journal warning: the client connection is closed");
    }
}
