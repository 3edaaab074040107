//! Which Codex binary a server was started from, to tell when it changed on disk (an upgrade
//! by npm, Homebrew or a package manager replaces the file): its inode, size and modification
//! time, read on the blocking pool.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What the file at a path was when it was looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

/// The stamp of `program` (a symlink followed, as starting it does); `None` when it cannot be
/// read (gone, or a bare name found on `PATH`): nothing is compared then.
pub(crate) async fn stamp(program: &Path) -> Option<Stamp> {
    let program: PathBuf = program.to_owned();
    tokio::task::spawn_blocking(move || read(&program))
        .await
        .ok()
        .flatten()
}

fn read(program: &Path) -> Option<Stamp> {
    if !program.is_absolute() {
        return None;
    }
    let meta = std::fs::metadata(program).ok()?;
    Some(Stamp {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_replaced_file_has_another_stamp_and_a_missing_one_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codex");
        std::fs::write(&path, "old").unwrap();
        let before = stamp(&path).await.expect("a stamp");
        assert_eq!(stamp(&path).await.as_ref(), Some(&before), "unchanged");
        // What an upgrade does: a new file renamed over the old one.
        let new = dir.path().join("codex.new");
        std::fs::write(&new, "newer").unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert_ne!(stamp(&path).await.as_ref(), Some(&before));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(stamp(&path).await, None);
        assert_eq!(
            stamp(Path::new("codex")).await,
            None,
            "a bare name is not compared"
        );
    }
}
