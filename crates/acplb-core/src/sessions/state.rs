//! Where acplb keeps what must outlive a process: `$ACPLB_STATE_DIR`, else
//! `$XDG_STATE_HOME/acplb`, else `~/.local/state/acplb`. Directories are created `0700`, files
//! that can hold conversation text `0600`.
//!
//! ```text
//! <state>/sessions/<session id>/journal.jsonl   the session's journal
//! <state>/sessions/<session id>/journal.lock    held (`flock`) by the process that has it open
//! <state>/sessions/<session id>/summary.md      its shutdown summary (session-summary plugin)
//! <state>/registry/<key>.json                   the registry, one file per identity
//! ```

use std::fs::{DirBuilder, File};
use std::io;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

/// The state directory from the environment (`env` looks a variable up), `None` when neither
/// `ACPLB_STATE_DIR`, `XDG_STATE_HOME` nor `HOME` is set.
pub fn state_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(dir) = env("ACPLB_STATE_DIR").filter(|s| !s.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    env("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| Path::new(&h).join(".local/state"))
        })
        .map(|d| d.join("acplb"))
}

/// The state directory of this process's environment.
pub fn state_dir_from_env() -> Option<PathBuf> {
    state_dir(|key| std::env::var(key).ok())
}

/// Why a string cannot be a session id: ids name directories, so only what acplb itself hands
/// out (letters, digits, `-`, `_`, at most 128) is accepted, never a path.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[error("{}", describe(.0))]
pub struct BadSessionId(pub String);

/// Why `id` is no session id, in words: a subagent's session id is told as such (ADR 0055).
fn describe(id: &str) -> String {
    crate::error::wire::subagents_session(id).unwrap_or_else(|| {
        format!("`{id}` is not a session id acplb hands out (letters, digits, `-` and `_`, at most 128)")
    })
}

/// Checks that `id` can name a session directory.
pub fn check_session_id(id: &str) -> Result<(), BadSessionId> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(BadSessionId(id.chars().take(140).collect()))
    }
}

/// The folder of every session's files.
pub fn sessions_dir(state: &Path) -> PathBuf {
    state.join("sessions")
}

/// The folder of one session's files (the id must have passed [`check_session_id`]).
pub fn session_dir(state: &Path, session_id: &str) -> PathBuf {
    sessions_dir(state).join(session_id)
}

/// The journal of one session.
pub fn journal_path(state: &Path, session_id: &str) -> PathBuf {
    session_dir(state, session_id).join(super::files::JOURNAL)
}

/// The shutdown summary of one session.
pub fn summary_path(state: &Path, session_id: &str) -> PathBuf {
    session_dir(state, session_id).join(super::files::SUMMARY)
}

/// The registry folder.
pub fn registry_dir(state: &Path) -> PathBuf {
    state.join("registry")
}

/// Creates `dir` and its missing parents, `0700`.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Opens `path` for appending, creating it `0600` (its folder must exist); a link or anything
/// but a regular file in its place is refused.
pub fn open_private_append(path: &Path) -> io::Result<File> {
    super::files::open(path, super::files::Access::Append { create: true })
}

/// Writes `bytes` to `path` atomically: a `0600` temporary file beside it, then a rename.
pub fn write_private_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_state_dir_follows_acplb_then_xdg_then_home() {
        let all = [
            ("ACPLB_STATE_DIR", "/a"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(state_dir(env(&all)), Some(PathBuf::from("/a")));
        assert_eq!(state_dir(env(&all[1..])), Some(PathBuf::from("/x/acplb")));
        assert_eq!(
            state_dir(env(&all[2..])),
            Some(PathBuf::from("/h/.local/state/acplb"))
        );
        assert_eq!(
            state_dir(env(&[("ACPLB_STATE_DIR", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.local/state/acplb"))
        );
        assert_eq!(state_dir(env(&[])), None);
    }

    #[test]
    fn only_ids_acplb_hands_out_name_a_folder() {
        assert!(check_session_id("0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b").is_ok());
        for bad in ["", "..", "../etc", "a/b", "a b", "ä", &"x".repeat(129)] {
            assert!(check_session_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn private_files_and_folders() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s/one");
        create_private_dir(&dir).unwrap();
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let f = dir.join("j");
        drop(open_private_append(&f).unwrap());
        assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o600);
        let g = dir.join("k");
        write_private_atomic(&g, b"hi").unwrap();
        assert_eq!(std::fs::read(&g).unwrap(), b"hi");
        assert_eq!(std::fs::metadata(&g).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
