//! A new session that forks a kept one: `session/new` with `_meta: {"acplb/forkOf": "<id>"}`.
//! The source is read from its journal, never changed (it may be open and running a turn):
//! its provider thread and what was said, for the provider to fork (ADR 0012).

use std::path::Path;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::Meta;

use super::durable::{self, CONTEXT_BYTES, Durability, READ_LIMIT};
use crate::error::Reason;
use crate::error::wire;
use crate::provider::Fork;
use crate::sessions::journal::{self, JournalError};
use crate::sessions::state;

/// The `_meta` key of `session/new` naming the session to fork.
pub const FORK_OF: &str = "acplb/forkOf";

/// The session `_meta` asks to fork, checked: a string that is a session id.
pub(super) fn requested(meta: Option<&Meta>) -> Result<Option<String>, Error> {
    let Some(value) = meta.and_then(|m| m.get(FORK_OF)) else {
        return Ok(None);
    };
    let Some(id) = value.as_str() else {
        return Err(wire::invalid_params(
            Reason::InvalidParams,
            format!("`_meta.{FORK_OF}` must be a session id (a string), not {value}"),
        ));
    };
    state::check_session_id(id)
        .map_err(|e| wire::invalid_params(Reason::InvalidParams, format!("`_meta.{FORK_OF}`: {e}")))?;
    Ok(Some(id.to_owned()))
}

/// What session `id` gives a fork: its thread and its summary or digest, read on the blocking
/// pool within [`READ_LIMIT`]. An unknown or unreadable source is an `invalid_params` error
/// naming it.
pub(super) async fn source(durability: &Durability, id: &str) -> Result<Fork, Error> {
    let (state, owned) = (durability.state_dir.clone(), id.to_owned());
    durable::off_loop("reading the session to fork", READ_LIMIT, move || {
        source_blocking(&state, &owned)
    })
    .await
}

fn source_blocking(state: &Path, id: &str) -> Result<Fork, Error> {
    let history = journal::read(state, id).map_err(|e| match e {
        JournalError::Missing { .. } => wire::invalid_params(
            Reason::UnknownSession,
            format!(
                "cannot fork session `{id}`: acplb keeps no session of that id (looked in {})",
                state::sessions_dir(state).display()
            ),
        ),
        other => wire::invalid_params(Reason::Storage, format!("cannot fork session `{id}`: {other}")),
    })?;
    let facts = history.facts();
    let context = durable::summary(
        state,
        id,
        "This session branches off an earlier conversation (a fork) and starts in a new Codex thread.",
    )
    .or_else(|| journal::fork_digest(&history, CONTEXT_BYTES));
    Ok(Fork {
        thread_id: facts.thread_id,
        context,
    })
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::ContentBlock;
    use serde_json::json;

    use super::*;
    use crate::sessions::journal::Journal;

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

    fn meta(value: serde_json::Value) -> Meta {
        let mut m = Meta::new();
        m.insert(FORK_OF.into(), value);
        m
    }

    #[test]
    fn the_source_must_be_a_session_id() {
        assert_eq!(requested(None).unwrap(), None);
        assert_eq!(requested(Some(&Meta::new())).unwrap(), None);
        assert_eq!(requested(Some(&meta(json!(ID)))).unwrap().as_deref(), Some(ID));
        let e = requested(Some(&meta(json!("../../etc")))).unwrap_err();
        assert!(e.message.contains("acplb/forkOf"), "{}", e.message);
        let e = requested(Some(&meta(json!(7)))).unwrap_err();
        assert!(e.message.contains("must be a session id"), "{}", e.message);
    }

    #[test]
    fn a_fork_gets_the_thread_and_a_digest_and_leaves_the_source_alone() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::create(dir.path(), ID, Path::new("/w"), u64::MAX).unwrap();
        j.thread("thr-1");
        j.prompt(1, &[ContentBlock::from("remember the pelican")], false);
        let before = std::fs::read(j.path()).unwrap();
        let fork = source_blocking(dir.path(), ID).unwrap();
        assert_eq!(fork.thread_id.as_deref(), Some("thr-1"));
        let context = fork.context.unwrap();
        assert!(context.contains("(a fork)"), "{context}");
        assert!(context.contains("User: remember the pelican"), "{context}");
        // The open turn is not closed: the source may be running it.
        assert_eq!(std::fs::read(j.path()).unwrap(), before);
    }

    #[test]
    fn an_unknown_or_damaged_source_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = source_blocking(dir.path(), ID).unwrap_err();
        assert!(
            e.message
                .starts_with(&format!("cannot fork session `{ID}`: acplb keeps no session")),
            "{}",
            e.message
        );
        let path = state::journal_path(dir.path(), ID);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "not a journal\n").unwrap();
        let e = source_blocking(dir.path(), ID).unwrap_err();
        assert!(
            e.message.contains("is not an acplb session journal"),
            "{}",
            e.message
        );
    }
}
