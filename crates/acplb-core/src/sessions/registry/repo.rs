//! Which git repository and branch a session's cwd is in, read from the files under `.git`
//! (no `git` process: this runs when a session opens).

use std::path::{Path, PathBuf};

/// The repository holding a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoInfo {
    /// The work tree's root (the folder holding `.git`).
    pub root: PathBuf,
    /// The root's folder name.
    pub name: String,
    /// The checked-out branch; the first 12 digits of the commit when `HEAD` is detached;
    /// `None` when `HEAD` cannot be read.
    pub branch: Option<String>,
}

impl RepoInfo {
    /// The repository holding `cwd`: the nearest ancestor (`cwd` included) with a `.git`
    /// folder, or a `.git` file naming the git folder (`gitdir: PATH`, as worktrees and
    /// submodules have). `None` outside any repository.
    pub fn find(cwd: &Path) -> Option<RepoInfo> {
        cwd.ancestors().find_map(|dir| {
            let dot_git = dir.join(".git");
            let meta = std::fs::metadata(&dot_git).ok()?;
            let git_dir = if meta.is_dir() {
                dot_git
            } else {
                linked_git_dir(dir, &std::fs::read_to_string(&dot_git).ok()?)?
            };
            let name = dir
                .file_name()
                .map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
            let branch = std::fs::read_to_string(git_dir.join("HEAD"))
                .ok()
                .and_then(|head| branch_of_head(&head));
            Some(RepoInfo {
                root: dir.to_owned(),
                name,
                branch,
            })
        })
    }
}

/// The git folder a `.git` file in `dir` names (`gitdir: PATH`, relative to `dir`).
fn linked_git_dir(dir: &Path, dot_git: &str) -> Option<PathBuf> {
    let target = dot_git.lines().next()?.strip_prefix("gitdir:")?.trim();
    (!target.is_empty()).then(|| dir.join(target))
}

/// The branch `HEAD` points to (`ref: refs/heads/x` → `x`, another ref as written), or the
/// short hash of a detached `HEAD`.
fn branch_of_head(head: &str) -> Option<String> {
    let head = head.trim();
    if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let branch = reference.strip_prefix("refs/heads/").unwrap_or(reference);
        return (!branch.is_empty()).then(|| branch.to_owned());
    }
    let is_hash = head.len() >= 40 && head.bytes().all(|b| b.is_ascii_hexdigit());
    is_hash.then(|| head[..12].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_repository_is_found_from_a_folder_below_its_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("acplb");
        write(&root.join(".git/HEAD"), "ref: refs/heads/issue-9\n");
        let deep = root.join("crates/core/src");
        std::fs::create_dir_all(&deep).unwrap();
        let want = RepoInfo {
            root: root.clone(),
            name: "acplb".into(),
            branch: Some("issue-9".into()),
        };
        assert_eq!(RepoInfo::find(&deep), Some(want.clone()));
        assert_eq!(RepoInfo::find(&root), Some(want));
    }

    #[test]
    fn a_worktree_file_leads_to_its_git_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let main_git = tmp.path().join("main/.git");
        write(&main_git.join("HEAD"), "ref: refs/heads/main\n");
        write(
            &main_git.join("worktrees/wt/HEAD"),
            "ref: refs/heads/h/registry\n",
        );
        let wt = tmp.path().join("wt");
        write(&wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n");
        let info = RepoInfo::find(&wt).unwrap();
        assert_eq!(info.root, wt);
        assert_eq!(info.name, "wt");
        assert_eq!(info.branch.as_deref(), Some("h/registry"));
        // An absolute `gitdir:` works the same.
        write(
            &wt.join(".git"),
            &format!("gitdir: {}\n", main_git.join("worktrees/wt").display()),
        );
        assert_eq!(RepoInfo::find(&wt).unwrap().branch.as_deref(), Some("h/registry"));
    }

    #[test]
    fn a_detached_head_gives_a_short_hash_and_junk_gives_none() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("r");
        write(
            &root.join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        );
        assert_eq!(
            RepoInfo::find(&root).unwrap().branch.as_deref(),
            Some("0123456789ab")
        );
        write(&root.join(".git/HEAD"), "garbage");
        let info = RepoInfo::find(&root).unwrap();
        assert_eq!((info.name.as_str(), info.branch), ("r", None));
        std::fs::remove_file(root.join(".git/HEAD")).unwrap();
        assert_eq!(RepoInfo::find(&root).unwrap().branch, None);
    }

    #[test]
    fn outside_a_repository_or_with_a_broken_git_file_there_is_none() {
        let tmp = tempfile::tempdir().unwrap();
        // The temp dir itself may sit inside a repository on a developer's machine; only
        // assert about what is below it.
        let plain = tmp.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let outer = RepoInfo::find(tmp.path());
        assert_eq!(RepoInfo::find(&plain), outer);
        let broken = tmp.path().join("broken");
        write(&broken.join(".git"), "not a gitdir line");
        assert_eq!(RepoInfo::find(&broken), outer);
    }
}
