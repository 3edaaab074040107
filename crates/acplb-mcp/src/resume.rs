//! `--resume [THREAD]`: the first `codex` call continues the named thread, or this identity's
//! most recent one, with its saved shutdown summary put before the prompt (a warning when it
//! has none). Found at start, read on the blocking pool.

use std::sync::{Mutex, PoisonError};

use acplb_core::sessions::registry::sort_newest_first;
use acplb_core::sessions::state;

use crate::config::Shared;

/// The thread to continue, and its summary.
#[derive(Debug, Clone)]
pub(crate) struct Resumed {
    pub(crate) thread: String,
    pub(crate) summary: Option<String>,
}

/// The thread the next `codex` call continues, taken once.
#[derive(Debug, Default)]
pub(crate) struct Pending(Mutex<Option<Resumed>>);

impl Pending {
    pub(crate) fn new(resumed: Option<Resumed>) -> Self {
        Self(Mutex::new(resumed))
    }

    pub(crate) fn take(&self) -> Option<Resumed> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The thread `--resume` names (`Some("")`: this identity's most recent), with its summary.
pub(crate) async fn find(shared: &Shared, wanted: Option<&str>) -> Result<Option<Resumed>, String> {
    let Some(wanted) = wanted else { return Ok(None) };
    let mut entries = crate::threads::entries(shared).await?;
    entries.retain(|e| shared.identity.as_deref().is_none_or(|id| e.has_identity(id)));
    sort_newest_first(&mut entries);
    let entry = if wanted.is_empty() {
        entries.into_iter().next().ok_or_else(|| match &shared.identity {
            Some(id) => format!("--resume: `{id}` has no thread to continue"),
            None => "--resume: there is no thread to continue".to_owned(),
        })?
    } else {
        entries
            .into_iter()
            .find(|e| e.session_id == wanted)
            .ok_or_else(|| format!("--resume: unknown thread `{wanted}` (see `acplb sessions list`)"))?
    };
    let Some(state_dir) = shared.state_dir.clone() else {
        return Ok(None);
    };
    let path = state::summary_path(&state_dir, &entry.session_id);
    let summary = tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
        .await
        .map_err(|e| format!("--resume: reading the summary stopped: {e}"))?
        .filter(|s| !s.trim().is_empty());
    Ok(Some(Resumed {
        thread: entry.session_id,
        summary,
    }))
}

impl Resumed {
    /// The first prompt: the summary, then the caller's.
    pub(crate) fn prompt(&self, prompt: &str) -> String {
        match &self.summary {
            Some(s) => format!(
                "<previous-session-summary>\n{}\n</previous-session-summary>\n\n{prompt}",
                s.trim()
            ),
            None => prompt.to_owned(),
        }
    }
}
