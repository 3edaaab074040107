//! The `<session-context>` block (identity, team, repo, branch, cwd) injected into every turn.
//!
//! It is computed fresh on each call, so a branch switch between prompts shows up, and reads
//! `.git/HEAD` directly instead of spawning git.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `HEAD` points at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Head {
    /// A branch (`refs/heads/<name>`), possibly unborn.
    Branch(String),
    /// A detached commit (abbreviated id).
    Detached(String),
    /// `HEAD` is a symbolic ref outside `refs/heads/`, shown in full.
    OtherRef(String),
    /// `HEAD` could not be read.
    Unknown,
}

/// The git repository a workspace is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoInfo {
    /// The repository (or worktree) directory name.
    pub name: String,
    /// The directory holding `.git`.
    pub root: PathBuf,
    /// The current `HEAD`.
    pub head: Head,
}

/// Everything the `<session-context>` block shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionContext {
    /// The agent identity.
    pub identity: String,
    /// The team.
    pub team: String,
    /// The workspace directory.
    pub cwd: PathBuf,
    /// The enclosing repository, or `None` outside git.
    pub repo: Option<RepoInfo>,
}

impl SessionContext {
    /// Looks at `workspace` now.
    pub fn capture(identity: &str, team: &str, workspace: &Path) -> Self {
        let cwd = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_owned());
        let repo = find_repo(&cwd);
        Self {
            identity: identity.to_owned(),
            team: team.to_owned(),
            cwd,
            repo,
        }
    }

    /// The block, one `Key:  value` line each, wrapped in `<session-context>` tags.
    pub fn render(&self) -> String {
        let (repo, branch) = match &self.repo {
            Some(r) => (
                format!("{} ({})", r.name, r.root.display()),
                match &r.head {
                    Head::Branch(b) | Head::OtherRef(b) => b.clone(),
                    Head::Detached(id) => format!("(detached HEAD at {id})"),
                    Head::Unknown => "(unknown)".to_owned(),
                },
            ),
            None => ("(not a git repository)".to_owned(), "(none)".to_owned()),
        };
        let mut out = String::from("<session-context>\n");
        for (key, value) in [
            ("Identity", self.identity.as_str()),
            ("Team", self.team.as_str()),
            ("Repo", repo.as_str()),
            ("Branch", branch.as_str()),
            ("CWD", &self.cwd.display().to_string()),
        ] {
            let _infallible = writeln!(out, "{:<10} {value}", format!("{key}:"));
        }
        out.push_str("</session-context>");
        out
    }
}

/// The `<session-context>` block for `workspace`, computed now.
pub fn session_context(identity: &str, team: &str, workspace: &Path) -> String {
    SessionContext::capture(identity, team, workspace).render()
}

/// The nearest ancestor of `dir` holding `.git` (a directory, or a file for worktrees and
/// submodules).
fn find_repo(dir: &Path) -> Option<RepoInfo> {
    let root = dir.ancestors().find(|d| d.join(".git").exists())?;
    let name = root.file_name().map_or_else(
        || root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let head = git_dir(&root.join(".git")).map_or(Head::Unknown, |gd| read_head(&gd));
    Some(RepoInfo {
        name,
        root: root.to_owned(),
        head,
    })
}

/// The git directory behind a `.git` entry: itself, or the target of a `gitdir: <path>` file.
fn git_dir(dot_git: &Path) -> Option<PathBuf> {
    if dot_git.is_dir() {
        return Some(dot_git.to_owned());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    // A relative gitdir is relative to the directory holding the `.git` file.
    Some(
        dot_git
            .parent()
            .map_or_else(|| PathBuf::from(target), |p| p.join(target)),
    )
}

fn read_head(git_dir: &Path) -> Head {
    let Ok(text) = std::fs::read_to_string(git_dir.join("HEAD")) else {
        return Head::Unknown;
    };
    let text = text.trim();
    match text.strip_prefix("ref:").map(str::trim) {
        Some(r) => r
            .strip_prefix("refs/heads/")
            .map_or_else(|| Head::OtherRef(r.to_owned()), |b| Head::Branch(b.to_owned())),
        None if text.len() >= 7 && text.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Head::Detached(text[..7].to_owned())
        }
        None => Head::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_git() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = SessionContext::capture("codex", "demo", dir.path());
        // Some CI sandboxes sit inside a repository; only assert when the temp dir is not in one.
        if ctx.repo.is_none() {
            let text = ctx.render();
            assert!(text.contains("Repo:      (not a git repository)\n"), "{text}");
            assert!(text.contains("Branch:    (none)\n"));
        }
    }

    #[test]
    fn branch_switch_detached_and_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("proj");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let ws = repo.join("src/deep");
        let text = session_context("arch-ctm", "atm-dev", &ws);
        let root = std::fs::canonicalize(&repo).unwrap();
        assert_eq!(
            text,
            format!(
                "<session-context>\nIdentity:  arch-ctm\nTeam:      atm-dev\nRepo:      proj ({})\nBranch:    main\nCWD:       {}\n</session-context>",
                root.display(),
                root.join("src/deep").display()
            )
        );
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        assert!(session_context("a", "t", &ws).contains("Branch:    feature/x\n"));
        std::fs::write(
            repo.join(".git/HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        assert!(session_context("a", "t", &ws).contains("Branch:    (detached HEAD at 0123456)\n"));

        let wt = dir.path().join("wt");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/HEAD"), "ref: refs/heads/topic\n").unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../proj/.git/worktrees/wt\n").unwrap();
        let ctx = SessionContext::capture("a", "t", &wt);
        assert_eq!(ctx.repo.as_ref().unwrap().head, Head::Branch("topic".into()));
        assert_eq!(ctx.repo.unwrap().name, "wt");
    }
}
