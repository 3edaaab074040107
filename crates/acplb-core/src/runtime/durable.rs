//! The runtime's side of durable sessions: creating a new session's journal and reading an
//! earlier one back (closing a turn it left open), both on the blocking pool, never on the
//! runtime thread.

use std::path::{Path, PathBuf};

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionInfo};

use super::wire_error;
use crate::sessions::journal::{self, Facts, History, Journal, JournalError};
use crate::sessions::registry::{DEFAULT_PAGE_SIZE, Registry, RegistryWriter, Status, page};
use crate::sessions::state;

/// Where sessions are kept so they outlive the process.
#[derive(Debug, Clone)]
pub struct Durability {
    /// acplb's state directory (journals, summaries, the registry).
    pub state_dir: PathBuf,
    /// The size limit of one journal, in bytes.
    pub journal_limit: u64,
    /// The registry's writer (`None`: sessions are kept but not indexed, so `session/list`
    /// shows none).
    pub registry: Option<RegistryWriter>,
}

/// The most of an earlier conversation put into a new thread's instructions.
pub(super) const CONTEXT_BYTES: usize = 16 * 1024;

/// An earlier session read back, ready to go on.
#[derive(Debug)]
pub(super) struct Loaded {
    pub(super) history: History,
    pub(super) facts: Facts,
    /// The journal, reopened for appending.
    pub(super) journal: Journal,
    /// Its summary, else a digest of its journal, for a thread that must start over.
    pub(super) context: Option<String>,
}

/// Creates a new session's journal; a failure is logged and the session goes on without one.
pub(super) fn create(durability: &Durability, session_id: &str, cwd: &Path) -> Option<Journal> {
    match Journal::create(&durability.state_dir, session_id, cwd, durability.journal_limit) {
        Ok(journal) => Some(journal),
        Err(e) => {
            tracing::warn!(session = %session_id, error = %e, "cannot create the session journal; this session will not be kept");
            None
        }
    }
}

/// Reads session `id` back: its history (a turn left open is closed as interrupted, in the
/// journal too), the journal reopened, its summary or digest.
pub(super) async fn load(durability: &Durability, id: &str) -> Result<Loaded, Error> {
    state::check_session_id(id).map_err(|e| wire_error::invalid_params(e.to_string()))?;
    let (state, owned, limit) = (
        durability.state_dir.clone(),
        id.to_owned(),
        durability.journal_limit,
    );
    tokio::task::spawn_blocking(move || load_blocking(&state, &owned, limit))
        .await
        .map_err(|e| wire_error::internal(&format!("reading the session failed: {e}")))?
}

fn load_blocking(state: &Path, id: &str, limit: u64) -> Result<Loaded, Error> {
    refuse_if_held_elsewhere(state, id)?;
    let path = state::journal_path(state, id);
    let mut history = journal::read(id, &path).map_err(|e| match e {
        JournalError::Missing { .. } => wire_error::invalid_params(format!(
            "unknown session `{id}`: acplb keeps no session of that id (looked in {})",
            state::sessions_dir(state).display()
        )),
        other => wire_error::internal(&other.to_string()),
    })?;
    for skipped in &history.skipped {
        tracing::warn!(session = %id, "journal {}: {skipped}", path.display());
    }
    let repair = journal::repair(&history);
    let facts_before = history.facts();
    let journal = Journal::reopen(&path, limit, facts_before.thread_id.clone())
        .map_err(|e| wire_error::internal(&format!("cannot reopen the journal {}: {e}", path.display())))?;
    if !repair.is_empty() {
        tracing::info!(session = %id, "the last turn never ended; it is marked interrupted");
        journal.records(&repair);
        history.records.extend(repair);
    }
    let facts = history.facts();
    let context = summary(
        state,
        id,
        "This session continues an earlier conversation whose Codex thread is no longer available.",
    )
    .or_else(|| journal::digest(&history, CONTEXT_BYTES));
    Ok(Loaded {
        history,
        facts,
        journal,
        context,
    })
}

/// Session `id`'s saved summary after `lead`, when it has one.
pub(super) fn summary(state: &Path, id: &str, lead: &str) -> Option<String> {
    std::fs::read_to_string(state::summary_path(state, id))
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| format!("{lead} Its summary:\n\n{}", s.trim()))
}

/// A session another live acplb has open is not opened here too: two processes would append
/// to one journal and drive one Codex thread from two places.
fn refuse_if_held_elsewhere(state: &Path, id: &str) -> Result<(), Error> {
    let found = match Registry::new(state).find(id) {
        Ok(found) => found,
        Err(e) => {
            // The journal is the record; an unreadable index does not keep a session closed.
            tracing::warn!(session = %id, error = %e, "cannot read the session registry; opening anyway");
            return Ok(());
        }
    };
    match found {
        Some(listed) if listed.entry.is_held() && listed.entry.pid != Some(std::process::id()) => {
            let pid = listed.entry.pid.unwrap_or_default();
            Err(wire_error::invalid_params(format!(
                "session `{id}` is open in another acplb (process {pid}); close it there first (session/close, or quit that editor)"
            )))
        }
        _ => Ok(()),
    }
}

/// `session/list` from the registry: newest first, a page at a time, optionally one workspace's.
pub(super) async fn list(
    durability: &Durability,
    cwd: Option<PathBuf>,
    cursor: Option<String>,
) -> Result<ListSessionsResponse, Error> {
    let registry = Registry::new(&durability.state_dir);
    let read = tokio::task::spawn_blocking(move || -> Result<ListSessionsResponse, Error> {
        let listing = registry
            .all()
            .map_err(|e| wire_error::internal(&format!("reading the session registry failed: {e}")))?;
        for problem in &listing.problems {
            tracing::warn!("session registry: {problem}");
        }
        let entries: Vec<_> = listing
            .into_entries()
            .into_iter()
            .filter(|e| e.effective_status() != Status::Unknown)
            .collect();
        let page = page(entries, cwd.as_deref(), cursor.as_deref(), DEFAULT_PAGE_SIZE)
            .map_err(|e| wire_error::invalid_params(e.to_string()))?;
        let sessions = page
            .entries
            .into_iter()
            .map(|e| {
                SessionInfo::new(e.session_id, e.cwd)
                    .title(e.title)
                    .updated_at(e.last_active)
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions).next_cursor(page.next_cursor))
    });
    read.await
        .map_err(|e| wire_error::internal(&format!("listing sessions failed: {e}")))?
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::ContentBlock;

    use super::*;

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

    fn session(state: &Path) {
        let j = Journal::create(state, ID, Path::new("/w"), u64::MAX).unwrap();
        j.prompt(1, &[ContentBlock::from("remember the pelican")], false);
        j.turn_end(1, "end_turn", None);
    }

    #[test]
    fn a_thread_that_must_start_over_gets_the_summary_else_a_digest() {
        let dir = tempfile::tempdir().unwrap();
        session(dir.path());
        let loaded = load_blocking(dir.path(), ID, u64::MAX).unwrap();
        let digest = loaded.context.unwrap();
        assert!(digest.contains("User: remember the pelican"), "{digest}");
        std::fs::write(
            state::summary_path(dir.path(), ID),
            "We talked about a pelican.\n",
        )
        .unwrap();
        let loaded = load_blocking(dir.path(), ID, u64::MAX).unwrap();
        let summary = loaded.context.unwrap();
        assert!(
            summary.ends_with("Its summary:\n\nWe talked about a pelican."),
            "{summary}"
        );
        assert_eq!(loaded.facts.turns, 1);
    }

    #[test]
    fn an_unknown_session_names_where_acplb_looked() {
        let dir = tempfile::tempdir().unwrap();
        let Err(e) = load_blocking(dir.path(), ID, u64::MAX) else {
            panic!("loaded a session that does not exist");
        };
        assert!(
            e.message
                .contains("acplb keeps no session of that id (looked in "),
            "{}",
            e.message
        );
    }
}
