//! Finding the Codex binary: `--codex`, else `ACPLB_CODEX` (both via clap), else `codex` on PATH;
//! and, for hints, the copies `scripts/install-test-deps` keeps in acplb's cache.

use std::ffi::OsString;
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

/// Codex binaries that `scripts/install-test-deps` (run by `scripts/demo` and `scripts/test`)
/// installed: `${ACPLB_CACHE:-$HOME/.cache/acplb}/codex-<version>/node_modules/@openai/
/// codex-linux-<arch>/vendor/<triple>/bin/codex`, newest version first.
pub(crate) fn installed_by_scripts(acplb_cache: Option<OsString>, home: Option<OsString>) -> Vec<PathBuf> {
    let cache = match (acplb_cache.filter(|c| !c.is_empty()), home) {
        (Some(cache), _) => PathBuf::from(cache),
        (None, Some(home)) => PathBuf::from(home).join(".cache/acplb"),
        (None, None) => return Vec::new(),
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    for version_dir in subdirs(&cache, "codex-") {
        for package in subdirs(&version_dir.join("node_modules/@openai"), "codex-linux-") {
            for triple in subdirs(&package.join("vendor"), "") {
                let bin = triple.join("bin/codex");
                if is_executable(&bin) {
                    let version = version_dir.file_name().map(|n| n.to_string_lossy().into_owned());
                    found.push((version.unwrap_or_default(), bin));
                }
            }
        }
    }
    found.sort_by_key(|(version, _)| std::cmp::Reverse(version_key(version)));
    found.into_iter().map(|(_, bin)| bin).collect()
}

/// The directories in `dir` whose names start with `prefix`.
fn subdirs(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect()
}

/// `codex-0.169.0` → `[0, 169, 0]`, so that 0.170 sorts after 0.99.
fn version_key(dir_name: &str) -> Vec<u64> {
    dir_name
        .trim_start_matches("codex-")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn fake_install(cache: &Path, version: &str) -> PathBuf {
        let bin = cache.join(format!(
            "codex-{version}/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
        ));
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        bin
    }

    #[test]
    fn finds_the_scripts_copies_newest_first() {
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join(".cache/acplb");
        let old = fake_install(&cache, "0.99.0");
        let new = fake_install(&cache, "0.169.0");
        std::fs::create_dir_all(cache.join("codex-0.200.0/node_modules")).unwrap();
        let found = installed_by_scripts(None, Some(home.path().into()));
        assert_eq!(found, vec![new, old]);
    }

    #[test]
    fn acplb_cache_wins_over_home() {
        let cache = tempfile::tempdir().unwrap();
        let bin = fake_install(cache.path(), "0.169.0");
        let found = installed_by_scripts(Some(cache.path().into()), Some("/nonexistent".into()));
        assert_eq!(found, vec![bin]);
        assert!(installed_by_scripts(None, None).is_empty());
    }
}
