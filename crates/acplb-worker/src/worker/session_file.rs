//! Which session is the worker's: its id kept under the state dir, so a restarted worker (or
//! daemon) loads the same session and its Codex thread goes on.

use std::path::{Path, PathBuf};

use crate::config::AgentName;

fn path(state: &Path, agent: &AgentName) -> PathBuf {
    state
        .join("workers")
        .join("agents")
        .join(format!("{agent}.session"))
}

/// The worker's session id, if it had one.
pub fn read(state: &Path, agent: &AgentName) -> Option<String> {
    let text = std::fs::read_to_string(path(state, agent)).ok()?;
    let id = text.trim();
    acplb_core::sessions::state::check_session_id(id).ok()?;
    Some(id.to_owned())
}

/// Remembers the worker's session id.
pub(crate) fn write(state: &Path, agent: &AgentName, id: &str) {
    let file = path(state, agent);
    let written = file
        .parent()
        .map_or(Ok(()), acplb_core::sessions::state::create_private_dir)
        .and_then(|()| acplb_core::sessions::state::write_private_atomic(&file, id.as_bytes()));
    if let Err(e) = written {
        tracing::warn!(file = %file.display(), error = %e, "cannot remember the worker's session; a restart starts a new one");
    }
}
