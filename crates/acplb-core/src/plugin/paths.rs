//! Which paths a composer file may name: a path value is resolved against the session's
//! workspace with `..` and symlinks followed, refused when acplb could never write there (a
//! directory, `/proc`), and, in a workspace's own file, kept inside the workspace or acplb's
//! state directory.
//!
//! The resolved path replaces the value, so the plugin opens exactly the path that was checked.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use super::registry::ParamKind;

/// Where a composer file's paths are resolved and what they may reach.
#[derive(Debug, Clone, Copy)]
pub struct PathRules<'a> {
    /// The session's workspace: relative values are relative to it.
    pub base: &'a Path,
    /// For a workspace's own file: the only directories its paths may lead into (the
    /// workspace and acplb's state directory). `None`: anywhere acplb can write.
    pub confine: Option<&'a [PathBuf]>,
}

/// Why a path value was refused: what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathProblem {
    /// What is wrong, following "`key` of plugin `id` ...".
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl PathProblem {
    fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

/// Pseudo filesystems: nothing acplb keeps can live there.
const PSEUDO: [&str; 3] = ["/proc", "/sys", "/dev"];
/// More symlinks than this on one path is a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Resolves `value` (a [`ParamKind::FilePath`] or [`ParamKind::DirPath`]) under `rules`.
pub fn resolve(value: &str, kind: ParamKind, rules: PathRules<'_>) -> Result<PathBuf, PathProblem> {
    let resolved = real_path(&rules.base.join(value))?;
    if let Some(dir) = PSEUDO.iter().find(|d| resolved.starts_with(d)) {
        return Err(PathProblem::new(
            format!(
                "is `{}`, inside `{dir}`, where acplb cannot keep files",
                resolved.display()
            ),
            "name a file on a real filesystem, such as one in your home directory",
        ));
    }
    if let Some(roots) = rules.confine {
        let roots: Vec<PathBuf> = roots
            .iter()
            .map(|r| real_path(r).unwrap_or_else(|_| r.clone()))
            .collect();
        if !roots.iter().any(|r| resolved.starts_with(r)) {
            let within = roots
                .iter()
                .map(|r| format!("`{}`", r.display()))
                .collect::<Vec<_>>()
                .join(" or ");
            return Err(PathProblem::new(
                format!("leads outside the workspace, to `{}`", resolved.display()),
                format!(
                    "a workspace's composer.toml may only name places under {within}; name other places in your own ~/.config/acplb/composer.toml or with --composer"
                ),
            ));
        }
    }
    check_kind(&resolved, kind)?;
    Ok(resolved)
}

/// One step of a path being walked; owned, since a symlink's target joins the walk.
enum Step {
    Root,
    Up,
    Name(std::ffi::OsString),
}

/// `path`'s steps, last first (the walk pops them).
fn steps(path: &Path) -> Vec<Step> {
    path.components()
        .rev()
        .filter_map(|c| match c {
            Component::Prefix(_) | Component::RootDir => Some(Step::Root),
            Component::CurDir => None,
            Component::ParentDir => Some(Step::Up),
            Component::Normal(name) => Some(Step::Name(name.to_owned())),
        })
        .collect()
}

/// `path` with every symlink and `..` resolved, as far as it exists; the part that does not
/// exist yet is appended as written, with its `..` applied to it (those are directories acplb
/// would create).
fn real_path(path: &Path) -> Result<PathBuf, PathProblem> {
    let mut out = PathBuf::new();
    let mut exists = true;
    let mut links = 0;
    let mut pending = steps(path);
    while let Some(step) = pending.pop() {
        match step {
            Step::Root => out = PathBuf::from("/"),
            // While the path exists `out` is real, so its parent is the real parent. Back out
            // of a missing part, the walk is on real ground again: links count from there.
            Step::Up => {
                out.pop();
                exists = exists || std::fs::symlink_metadata(&out).is_ok();
            }
            Step::Name(name) => {
                out.push(name);
                if !exists {
                    continue;
                }
                match std::fs::symlink_metadata(&out) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        links += 1;
                        if links > MAX_LINKS {
                            return Err(PathProblem::new(
                                format!("`{}` has a symlink loop", path.display()),
                                "name a path without the loop",
                            ));
                        }
                        let target = std::fs::read_link(&out).map_err(|e| unreadable(&out, &e))?;
                        out.pop();
                        // The link's target is walked in place of the link (from `/` when absolute).
                        pending.extend(steps(&target));
                    }
                    Ok(_) => {}
                    Err(e) if missing(&e) => exists = false,
                    Err(e) => return Err(unreadable(&out, &e)),
                }
            }
        }
    }
    Ok(out)
}

/// Nothing there (or a file where a directory was expected, which the caller reports).
fn missing(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory)
}

fn unreadable(path: &Path, e: &std::io::Error) -> PathProblem {
    PathProblem::new(
        format!("cannot be checked: `{}`: {e}", path.display()),
        "name a path acplb can read",
    )
}

/// The kind-specific checks on a resolved path: what exists there, and whether acplb could
/// create what does not.
fn check_kind(resolved: &Path, kind: ParamKind) -> Result<(), PathProblem> {
    let want_dir = kind == ParamKind::DirPath;
    match std::fs::metadata(resolved) {
        Ok(meta) if want_dir && !meta.is_dir() => Err(PathProblem::new(
            format!("is `{}`, which is not a directory", resolved.display()),
            "name a directory",
        )),
        Ok(meta) if !want_dir && meta.is_dir() => Err(PathProblem::new(
            format!("is `{}`, which is a directory", resolved.display()),
            "name a file in it, such as `audit.jsonl`",
        )),
        Ok(meta) if !want_dir && !meta.is_file() => Err(PathProblem::new(
            format!("is `{}`, which is not a regular file", resolved.display()),
            "name a regular file (acplb appends to it)",
        )),
        Ok(_) => Ok(()),
        Err(e) if missing(&e) => parent_is_creatable(resolved),
        Err(e) => Err(unreadable(resolved, &e)),
    }
}

/// Whether the nearest existing ancestor of a missing path is a directory.
fn parent_is_creatable(path: &Path) -> Result<(), PathProblem> {
    for ancestor in path.ancestors().skip(1) {
        match std::fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(PathProblem::new(
                    format!(
                        "is `{}`, but `{}` is a file, not a directory",
                        path.display(),
                        ancestor.display()
                    ),
                    "name a path whose parents are directories",
                ));
            }
            Err(e) if missing(&e) => {}
            Err(e) => return Err(unreadable(ancestor, &e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(base: &Path) -> PathRules<'_> {
        PathRules { base, confine: None }
    }

    #[test]
    fn relative_paths_resolve_in_the_workspace_with_dots_and_links_followed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(ws.join("logs")).unwrap();
        std::os::unix::fs::symlink(ws.join("logs"), ws.join("link")).unwrap();
        let file = ParamKind::FilePath;
        assert_eq!(resolve("a.jsonl", file, rules(&ws)).unwrap(), ws.join("a.jsonl"));
        assert_eq!(
            resolve("./logs/../a.jsonl", file, rules(&ws)).unwrap(),
            ws.join("a.jsonl")
        );
        assert_eq!(
            resolve("link/a.jsonl", file, rules(&ws)).unwrap(),
            ws.join("logs/a.jsonl")
        );
        assert_eq!(
            resolve("new/dir/../a.jsonl", file, rules(&ws)).unwrap(),
            ws.join("new/a.jsonl")
        );
        assert_eq!(
            resolve("/abs/x.jsonl", file, rules(&ws)).unwrap(),
            Path::new("/abs/x.jsonl")
        );
    }

    #[test]
    fn a_workspace_file_cannot_leave_the_workspace_by_dots_or_links() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let state = base.join("state");
        std::fs::create_dir(&ws).unwrap();
        std::os::unix::fs::symlink(&base, ws.join("up")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere.txt"), ws.join("dangling")).unwrap();
        let roots = [ws.clone(), state.clone()];
        let confined = PathRules {
            base: &ws,
            confine: Some(&roots),
        };
        let file = ParamKind::FilePath;
        for escape in [
            "../home/.bashrc",
            "up/x.jsonl",
            "dangling",
            "/etc/x.jsonl",
            "a/../../x",
            "nope/../up/x.jsonl",
        ] {
            let problem = resolve(escape, file, confined).unwrap_err();
            assert!(
                problem.message.starts_with("leads outside the workspace"),
                "{escape}: {problem:?}"
            );
            assert!(problem.hint.contains(&ws.display().to_string()), "{problem:?}");
        }
        assert_eq!(
            resolve("logs/a.jsonl", file, confined).unwrap(),
            ws.join("logs/a.jsonl")
        );
        let in_state = state.join("audit.jsonl");
        assert_eq!(
            resolve(in_state.to_str().unwrap(), file, confined).unwrap(),
            in_state
        );
        // The same values are fine in the user's own file.
        assert!(resolve("../x.jsonl", file, rules(&ws)).is_ok());
    }

    #[test]
    fn places_acplb_could_never_write_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(ws.join("file"), "").unwrap();
        let file = ParamKind::FilePath;
        let message = |value: &str, kind| resolve(value, kind, rules(&ws)).unwrap_err().message;
        assert!(message(".", file).ends_with("which is a directory"));
        assert!(message("/proc/self/audit.jsonl", file).contains("inside `/proc`"));
        assert!(message("/sys/x", file).contains("inside `/sys`"));
        assert!(message("/dev/null", file).contains("inside `/dev`"));
        assert!(message("file/a.jsonl", file).contains("is a file, not a directory"));
        assert!(message("file", ParamKind::DirPath).ends_with("which is not a directory"));
        assert!(resolve("file", file, rules(&ws)).is_ok());
        assert!(resolve(".", ParamKind::DirPath, rules(&ws)).is_ok());
    }

    #[test]
    fn a_symlink_loop_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink(ws.join("b"), ws.join("a")).unwrap();
        std::os::unix::fs::symlink(ws.join("a"), ws.join("b")).unwrap();
        let problem = resolve("a/x", ParamKind::FilePath, rules(&ws)).unwrap_err();
        assert!(problem.message.contains("symlink loop"), "{problem:?}");
    }
}
