//! Old and new texts of the files a turn changes, for real diffs.
//!
//! `codex exec --json` reports a `file_change` with paths only, and by the time its
//! `item.started` line is read the patch may already be on disk. So when a turn may write,
//! acplb snapshots the workspace into a git tree at turn start (a temporary index with
//! `git add -A`, then `write-tree`: the user's index and work tree are untouched) and reads
//! old texts from that tree. Later changes to the same file in the turn start from the text
//! the previous change left. Outside git the old text is reported as unknown.
//!
//! Every git call is a `tokio::process` child with a time limit, so a slow git (a huge
//! repository, a hung filesystem) never stalls the runtime thread that all sessions share. The
//! decoder asks for old texts synchronously, so they are read ahead ([`TurnFiles::prefetch`])
//! when a `file_change` line arrives, before the decoder sees it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::render::edits::{FileTexts, OldText};

/// The longest one `git cat-file` may take before the old text is reported as unknown.
const READ_LIMIT: Duration = Duration::from_secs(5);

/// A git tree holding the workspace as it was when the turn started.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    root: PathBuf,
    tree: String,
    /// The git program (`git`; tests substitute a slow one).
    git: OsString,
}

/// Why there is no snapshot, shown to the user as the reason an old text is unknown.
pub(crate) type NoSnapshot = String;

/// Takes a snapshot of the git work tree containing `cwd`, within `limit`.
pub(crate) async fn snapshot(cwd: &Path, limit: Duration) -> Result<Snapshot, NoSnapshot> {
    match tokio::time::timeout(limit, take_snapshot(cwd)).await {
        Ok(result) => result,
        Err(_) => Err(format!("snapshotting the workspace took longer than {limit:?}")),
    }
}

async fn take_snapshot(cwd: &Path) -> Result<Snapshot, NoSnapshot> {
    let out = git(cwd, &["rev-parse", "--show-toplevel", "--absolute-git-dir"], None).await?;
    let mut lines = out.lines();
    let (Some(root), Some(git_dir)) = (lines.next(), lines.next()) else {
        return Err("the workspace is not in a git repository".into());
    };
    let root = PathBuf::from(root);
    let index =
        tempfile::NamedTempFile::new().map_err(|e| format!("cannot create a temporary index: {e}"))?;
    let real_index = Path::new(git_dir).join("index");
    // Starting from the real index lets git skip re-hashing unchanged files. The index can be
    // large, so it is copied off the runtime thread.
    match tokio::fs::copy(&real_index, index.path()).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot copy the git index: {e}")),
    }
    git(&root, &["add", "-A", "--", "."], Some(index.path())).await?;
    let tree = git(&root, &["write-tree"], Some(index.path()))
        .await?
        .trim()
        .to_owned();
    Ok(Snapshot {
        root,
        tree,
        git: "git".into(),
    })
}

async fn git(dir: &Path, args: &[&str], index: Option<&Path>) -> Result<String, NoSnapshot> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    let out = cmd.output().await.map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(if err.contains("not a git repository") {
            "the workspace is not in a git repository".into()
        } else {
            format!("git {} failed: {}", args.join(" "), err.trim())
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The [`FileTexts`] of one turn.
#[derive(Debug)]
pub(crate) struct TurnFiles {
    snapshot: Result<Snapshot, NoSnapshot>,
    /// Texts left by earlier changes in this turn (`None`: deleted).
    changed: HashMap<PathBuf, Option<String>>,
    /// Old texts read from the snapshot ahead of the decoder's question.
    fetched: HashMap<PathBuf, OldText>,
}

impl TurnFiles {
    pub(crate) fn new(snapshot: Result<Snapshot, NoSnapshot>) -> Self {
        Self {
            snapshot,
            changed: HashMap::new(),
            fetched: HashMap::new(),
        }
    }

    /// Reads the old texts of `paths` from the snapshot (off the runtime thread), so that
    /// [`FileTexts::before`] can answer without blocking.
    pub(crate) async fn prefetch(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        let Ok(snap) = &self.snapshot else { return };
        for path in paths {
            if self.changed.contains_key(&path) || self.fetched.contains_key(&path) {
                continue;
            }
            let old = from_snapshot(snap, &path).await;
            self.fetched.insert(path, old);
        }
    }
}

/// The text of `path` in the snapshot, by `git cat-file` within [`READ_LIMIT`].
async fn from_snapshot(snap: &Snapshot, path: &Path) -> OldText {
    let Ok(rel) = path.strip_prefix(&snap.root) else {
        return OldText::Unknown {
            reason: "the file is outside the git work tree".into(),
        };
    };
    let spec = format!("{}:{}", snap.tree, rel.to_string_lossy());
    let out = Command::new(&snap.git)
        .arg("-C")
        .arg(&snap.root)
        .args(["cat-file", "blob", &spec])
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(READ_LIMIT, out).await {
        Ok(Ok(o)) if o.status.success() => match String::from_utf8(o.stdout) {
            Ok(text) => OldText::Known(text),
            Err(_) => OldText::Unknown {
                reason: "the file is not UTF-8 text".into(),
            },
        },
        Ok(Ok(_)) if !tokio::fs::try_exists(path).await.unwrap_or(true) => OldText::Absent,
        Ok(Ok(_)) => OldText::Unknown {
            reason: "the file was not in the snapshot (ignored by git?)".into(),
        },
        Ok(Err(e)) => OldText::Unknown {
            reason: format!("cannot run git: {e}"),
        },
        Err(_) => OldText::Unknown {
            reason: format!("reading it from the snapshot took longer than {READ_LIMIT:?}"),
        },
    }
}

impl FileTexts for TurnFiles {
    fn before(&mut self, path: &Path) -> OldText {
        if let Some(text) = self.changed.get(path) {
            return text.clone().map_or(OldText::Absent, OldText::Known);
        }
        match (&self.snapshot, self.fetched.get(path)) {
            (Err(reason), _) => OldText::Unknown {
                reason: reason.clone(),
            },
            (Ok(_), Some(old)) => old.clone(),
            // Every path of a `file_change` is fetched before the decoder sees it.
            (Ok(_), None) => OldText::Unknown {
                reason: "it was not read from the snapshot in time".into(),
            },
        }
    }

    fn after(&mut self, path: &Path) -> Option<String> {
        let text = std::fs::read_to_string(path).ok();
        self.changed.insert(path.to_owned(), text.clone());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(ok.success(), "{script}");
    }

    #[tokio::test]
    async fn old_texts_come_from_the_turn_start_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m init",
        );
        sh(
            d,
            "printf 'committed\\n' > a.txt && git add a.txt && git -c user.email=t@t -c user.name=t commit -qm a",
        );
        sh(d, "printf 'dirty\\n' > a.txt && printf 'untracked\\n' > u.txt");
        let snap = snapshot(d, Duration::from_secs(10)).await;
        let mut files = TurnFiles::new(snap);
        // The patch lands after the snapshot.
        sh(d, "printf 'patched\\n' > a.txt && rm u.txt");
        let a = d.join("a.txt");
        files
            .prefetch([a.clone(), d.join("u.txt"), d.join("new.txt")])
            .await;
        assert!(matches!(files.before(&a), OldText::Known(t) if t == "dirty\n"));
        assert!(matches!(files.before(&d.join("u.txt")), OldText::Known(t) if t == "untracked\n"));
        assert_eq!(files.after(&a).as_deref(), Some("patched\n"));
        // A second change in the same turn starts from the first one's result.
        assert!(matches!(files.before(&a), OldText::Known(t) if t == "patched\n"));
        assert!(matches!(files.before(&d.join("new.txt")), OldText::Absent));
        // The user's own index is untouched: u.txt is still untracked there.
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&status.stdout).contains(" M a.txt"));
    }

    #[tokio::test]
    async fn outside_git_the_old_text_is_unknown_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let snap = snapshot(dir.path(), Duration::from_secs(10)).await;
        let mut files = TurnFiles::new(snap);
        match files.before(&dir.path().join("x.txt")) {
            OldText::Unknown { reason } => assert!(reason.contains("not in a git repository"), "{reason}"),
            other => panic!("expected unknown, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_slow_git_does_not_stall_the_runtime_thread() {
        use std::os::unix::fs::PermissionsExt as _;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join("slow-git");
        std::fs::write(&git, "#!/bin/sh\nsleep 0.5\necho old text\n").unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        let snap = Snapshot {
            root: dir.path().to_owned(),
            tree: "0123abcd".into(),
            git: git.into(),
        };
        // This test runs on a current-thread runtime: the ticker only advances while the
        // old-text read yields the thread.
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticker = {
            let ticks = ticks.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    ticks.fetch_add(1, Ordering::SeqCst);
                }
            })
        };
        let mut files = TurnFiles::new(Ok(snap));
        let path = dir.path().join("a.txt");
        files.prefetch([path.clone()]).await;
        ticker.abort();
        assert!(matches!(files.before(&path), OldText::Known(t) if t == "old text\n"));
        let ticks = ticks.load(Ordering::SeqCst);
        assert!(
            ticks >= 5,
            "the runtime stalled during git: {ticks} ticks in 0.5 s"
        );
    }
}
