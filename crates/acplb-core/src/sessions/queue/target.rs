//! Who a queue is for: a session id, or a worker identity `name@team`. The target names a
//! folder, so only names that cannot leave `<state>/queue/` pass.

use std::path::{Path, PathBuf};

use super::QueueError;
use crate::sessions::state::check_session_id;

/// The longest worker identity, in bytes.
pub const MAX_IDENTITY_BYTES: usize = 200;

/// Checks that `target` can name a queue: a session id acplb hands out (see
/// [`check_session_id`]) or, when it holds an `@`, a worker identity `name@team` (not empty,
/// no `/`, no `..`, no control characters, at most [`MAX_IDENTITY_BYTES`] bytes). The sender
/// and the consumer both go through here, so they agree on the folder.
pub fn check_target(target: &str) -> Result<(), QueueError> {
    let refuse = |reason| {
        Err(QueueError::BadTarget {
            target: target.chars().take(200).collect(),
            reason,
        })
    };
    if target.is_empty() {
        return refuse("it is empty");
    }
    if !target.contains('@') {
        return match check_session_id(target) {
            Ok(()) => Ok(()),
            Err(_) => refuse(
                "a session id is letters, digits, `-` and `_` (at most 128), a worker identity is `name@team`",
            ),
        };
    }
    if target.len() > MAX_IDENTITY_BYTES {
        return refuse("a worker identity is at most 200 bytes");
    }
    if target.contains('/') || target.contains("..") {
        return refuse("a worker identity may hold neither `/` nor `..`");
    }
    if target.chars().any(char::is_control) {
        return refuse("a worker identity may hold no control characters");
    }
    if target.starts_with('@') || target.ends_with('@') {
        return refuse("a worker identity is `name@team`, both parts non-empty");
    }
    Ok(())
}

/// The folder of every queue.
pub fn queues_dir(state: &Path) -> PathBuf {
    state.join("queue")
}

/// The folder of `target`'s queue (the target must have passed [`check_target`]).
pub fn queue_dir(state: &Path, target: &str) -> PathBuf {
    queues_dir(state).join(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_and_identities_are_targets() {
        for good in [
            "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
            "sess_1",
            "bob@core",
            "Bö b@team-1",
            &format!("{}@t", "n".repeat(MAX_IDENTITY_BYTES - 2)),
        ] {
            assert!(check_target(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn nothing_that_leaves_the_queue_folder_is_a_target() {
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "a b",
            "../x@y",
            "x@..",
            "a@b/c",
            "a@b\nc",
            "a@b\0",
            "@team",
            "bob@",
            &format!("{}@t", "n".repeat(MAX_IDENTITY_BYTES - 1)),
            &"x".repeat(129),
        ] {
            let err = check_target(bad).unwrap_err();
            assert!(matches!(err, QueueError::BadTarget { .. }), "{bad:?}");
        }
        let msg = check_target("a/b").unwrap_err().to_string();
        assert!(msg.starts_with("`a/b` is not a queue target"), "{msg}");
    }

    #[test]
    fn a_queue_lives_under_the_state_dir() {
        assert_eq!(
            queue_dir(Path::new("/s"), "bob@core"),
            Path::new("/s/queue/bob@core")
        );
    }
}
