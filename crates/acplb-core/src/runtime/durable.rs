//! The runtime's side of durable sessions: creating a new session's journal (on the runtime
//! thread: a folder and a file on a local disk, ADR 0012), and reading an earlier one back
//! (holding it, closing a turn it left open) on the blocking pool within a time limit.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{ListSessionsResponse, SessionArchiveFilter, SessionInfo};

use crate::error::Reason;
use crate::error::wire;
use crate::sessions::files::{self, SessionDir};
use crate::sessions::hold::HoldError;
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

/// Creates a new session's journal, keeping `meta` in it; a failure is logged and the session
/// goes on without one.
pub(super) fn create(
    durability: &Durability,
    session_id: &str,
    cwd: &Path,
    meta: serde_json::Map<String, serde_json::Value>,
) -> Option<Journal> {
    match Journal::create_keeping(
        &durability.state_dir,
        session_id,
        cwd,
        durability.journal_limit,
        meta,
    ) {
        Ok(journal) => Some(journal),
        Err(e) => {
            tracing::warn!(session = %session_id, error = %e, "cannot create the session journal; this session will not be kept");
            None
        }
    }
}

/// The longest acplb waits for a session's files to be read (a journal on a stalled network
/// file system, say): then the request is answered with an error instead of waiting for ever.
pub(super) const READ_LIMIT: Duration = Duration::from_secs(60);

/// The most of a saved summary read.
const SUMMARY_BYTES: u64 = 1 << 20;

/// Reads session `id` back: holds it (ADR 0015: refused when another process has it), reads
/// its history (a turn left open is closed as interrupted, in the journal too), reopens the
/// journal, reads its summary or digest. On the blocking pool, within [`READ_LIMIT`].
pub(super) async fn load(durability: &Durability, id: &str) -> Result<Loaded, Error> {
    state::check_session_id(id).map_err(|e| wire::invalid_params(Reason::InvalidParams, e.to_string()))?;
    let (state, owned, limit) = (
        durability.state_dir.clone(),
        id.to_owned(),
        durability.journal_limit,
    );
    off_loop("reading the session", READ_LIMIT, move || {
        load_blocking(&state, &owned, limit)
    })
    .await
}

/// Runs `read` on the blocking pool and waits at most `limit` for it. A read that is still
/// stuck then (a stalled disk) is left to finish on its own; what it returns is dropped.
pub(super) async fn off_loop<T: Send + 'static>(
    what: &str,
    limit: Duration,
    read: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(read)).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(wire::internal(Reason::Internal, &format!("{what} failed: {e}"))),
        Err(_) => Err(wire::internal(
            Reason::StorageStalled,
            &format!(
                "{what} took longer than {}: its files may be on a disk that does not answer",
                humantime::format_duration(limit)
            ),
        )),
    }
}

fn load_blocking(state: &Path, id: &str, limit: u64) -> Result<Loaded, Error> {
    // A subagent's session (AIR's bare thread id of a child's first life) is told as such.
    let unknown = || {
        let message = wire::subagents_session(id).unwrap_or_else(|| {
            format!(
                "unknown session `{id}`: acplb keeps no session of that id (looked in {})",
                state::sessions_dir(state).display()
            )
        });
        wire::invalid_params(Reason::UnknownSession, message)
    };
    let dir = SessionDir::open(state, id).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => unknown(),
        _ => wire::internal(
            Reason::Storage,
            &format!(
                "cannot open the session folder {}: {e}",
                state::session_dir(state, id).display()
            ),
        ),
    })?;
    let hold = dir.hold().map_err(|e| match e {
        HoldError::Io { .. } => wire::internal(Reason::Storage, &e.to_string()),
        HoldError::Here { .. } => wire::invalid_params(Reason::SessionOpening, e.to_string()),
        HoldError::Elsewhere { .. } => wire::invalid_params(Reason::SessionHeld, e.to_string()),
    })?;
    if crate::sessions::shelf::is_archived(state, id) {
        return Err(wire::invalid_params(
            Reason::SessionArchived,
            format!(
                "session `{id}` is archived; unarchive it (session/unarchive) before loading or resuming it"
            ),
        ));
    }
    let path = dir.journal_path();
    let mut history = journal::read_in(&dir).map_err(|e| match e {
        JournalError::Missing { .. } => unknown(),
        other => wire::internal(Reason::Storage, &other.to_string()),
    })?;
    for skipped in &history.skipped {
        tracing::warn!(session = %id, "journal {}: skipped {skipped}", path.display());
    }
    let repair = journal::repair(&history);
    let facts_before = history.facts();
    let journal = Journal::reopen(&dir, hold, limit, facts_before.thread_id.clone()).map_err(|e| {
        wire::internal(
            Reason::Storage,
            &format!("cannot reopen the journal {}: {e}", path.display()),
        )
    })?;
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

/// Session `id`'s saved summary after `lead`, when it has one (a link or a FIFO in its place is
/// not read).
pub(super) fn summary(state: &Path, id: &str, lead: &str) -> Option<String> {
    let bytes = files::read_limited(&state::summary_path(state, id), SUMMARY_BYTES).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    (!text.is_empty()).then(|| format!("{lead} Its summary:\n\n{text}"))
}

/// A kept session as a row of `session/list` (and `_session/batch_get`).
pub(super) fn row(e: crate::sessions::registry::Entry) -> SessionInfo {
    SessionInfo::new(e.session_id, e.cwd)
        .title(e.title)
        .updated_at(e.last_active)
        .archived(e.archived.then_some(true))
}

/// `session/list` from the registry: newest first, a page at a time, optionally one workspace's.
/// It answers after every registry change this process sent before it is on disk, so a list
/// right after a prompt or a `session/new` shows them (the writer is otherwise asynchronous).
pub(super) async fn list(
    durability: &Durability,
    cwd: Option<PathBuf>,
    cursor: Option<String>,
    archived: Option<SessionArchiveFilter>,
) -> Result<ListSessionsResponse, Error> {
    let wanted = match archived.unwrap_or_default() {
        SessionArchiveFilter::Exclude => |e: &crate::sessions::registry::Entry| !e.archived,
        SessionArchiveFilter::Include => |_: &crate::sessions::registry::Entry| true,
        SessionArchiveFilter::Only => |e: &crate::sessions::registry::Entry| e.archived,
        other => {
            let message = format!("`archived` is one of `exclude`, `include`, `only`, not {other:?}");
            return Err(wire::invalid_params(Reason::InvalidParams, message));
        }
    };
    if let Some(writer) = &durability.registry {
        writer.flush().await;
    }
    let registry = Registry::new(&durability.state_dir);
    let read = tokio::task::spawn_blocking(move || -> Result<ListSessionsResponse, Error> {
        let listing = registry.all().map_err(|e| {
            wire::internal(
                Reason::Storage,
                &format!("reading the session registry failed: {e}"),
            )
        })?;
        for problem in &listing.problems {
            tracing::warn!("session registry: {problem}");
        }
        let entries: Vec<_> = listing
            .into_entries()
            .into_iter()
            .filter(|e| e.effective_status() != Status::Unknown && wanted(e))
            .collect();
        let page = page(entries, cwd.as_deref(), cursor.as_deref(), DEFAULT_PAGE_SIZE)
            .map_err(|e| wire::invalid_params(Reason::InvalidParams, e.to_string()))?;
        let sessions = page.entries.into_iter().map(row).collect();
        Ok(ListSessionsResponse::new(sessions).next_cursor(page.next_cursor))
    });
    read.await
        .map_err(|e| wire::internal(Reason::Internal, &format!("listing sessions failed: {e}")))?
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
        let digest = load_blocking(dir.path(), ID, u64::MAX).unwrap().context.unwrap();
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

    #[test]
    fn a_session_held_elsewhere_is_refused_until_it_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        session(dir.path());
        let loaded = load_blocking(dir.path(), ID, u64::MAX).unwrap();
        let e = load_blocking(dir.path(), ID, u64::MAX).unwrap_err();
        assert!(
            e.message.contains("still opening or closing in this acplb"),
            "{}",
            e.message
        );
        drop(loaded);
        assert!(load_blocking(dir.path(), ID, u64::MAX).is_ok());
    }

    #[test]
    fn a_journal_that_is_a_link_or_a_fifo_is_refused_and_nothing_is_written_through_it() {
        let dir = tempfile::tempdir().unwrap();
        session(dir.path());
        let path = state::journal_path(dir.path(), ID);
        let outside = dir.path().join("outside.jsonl");
        std::fs::rename(&path, &outside).unwrap();
        let before = std::fs::read(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        let e = load_blocking(dir.path(), ID, u64::MAX).unwrap_err();
        assert!(e.message.contains("symbolic link"), "{}", e.message);
        assert_eq!(std::fs::read(&outside).unwrap(), before);
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = load_blocking(dir.path(), ID, u64::MAX).unwrap_err();
        assert!(e.message.contains("a FIFO, not a regular file"), "{}", e.message);
    }

    #[tokio::test]
    async fn a_read_that_does_not_finish_in_time_is_answered_with_an_error() {
        let (_stuck, stays) = std::sync::mpsc::channel::<()>();
        // The paused clock does not move while a blocking task runs: a short real limit.
        let limit = Duration::from_millis(50);
        let e = off_loop("reading the session", limit, move || {
            // A read on a disk that never answers: it waits until the test ends.
            stays.recv().ok();
            Ok(())
        })
        .await
        .unwrap_err();
        assert!(
            e.message.contains("reading the session took longer than 50ms"),
            "{}",
            e.message
        );
    }
}
