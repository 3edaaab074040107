//! Finding the Codex binary: `--codex`, else `ACPLB_CODEX` (both via clap), else `codex` on PATH.

use std::path::{Path, PathBuf};

/// The binary to run, and whether it was actually found.
pub(crate) fn resolve(explicit: Option<&Path>) -> (PathBuf, bool) {
    if let Some(p) = explicit {
        return (p.to_owned(), is_executable(p));
    }
    match which("codex") {
        Some(p) => (p, true),
        None => (PathBuf::from("codex"), false),
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
