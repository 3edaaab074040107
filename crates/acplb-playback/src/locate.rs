//! Finding the acplb binary: `--acplb PATH`, else `$ACPLB_BIN`, else next to the running
//! playback (same target directory), else `acplb` on `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::PlaybackError;

/// The environment variable naming the acplb binary.
pub const ACPLB_BIN_VAR: &str = "ACPLB_BIN";

/// The acplb binary to use.
pub fn acplb(explicit: Option<&Path>) -> Result<PathBuf, PlaybackError> {
    find(
        explicit,
        std::env::var_os(ACPLB_BIN_VAR),
        std::env::current_exe().ok(),
        std::env::var_os("PATH").as_deref(),
    )
}

fn find(
    explicit: Option<&Path>,
    env: Option<OsString>,
    exe: Option<PathBuf>,
    path: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, PlaybackError> {
    if let Some(p) = explicit {
        return existing(p.to_path_buf(), "--acplb");
    }
    if let Some(p) = env.filter(|p| !p.is_empty()) {
        return existing(PathBuf::from(p), ACPLB_BIN_VAR);
    }
    let sibling = exe.and_then(|e| e.parent().map(|d| d.join("acplb")));
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("acplb"));
    sibling
        .into_iter()
        .chain(on_path)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            PlaybackError::Session(
                "acplb not found: pass --acplb PATH, set ACPLB_BIN, build it next to playback (`cargo build -p acplb`), or put it on PATH".to_owned(),
            )
        })
}

fn existing(path: PathBuf, from: &str) -> Result<PathBuf, PlaybackError> {
    if path.is_file() {
        Ok(path)
    } else {
        Err(PlaybackError::Session(format!(
            "acplb not found at `{}` (from {from})",
            path.display()
        )))
    }
}

/// The running playback binary (the stand-in and the MCP server are playback itself).
pub fn playback() -> Result<PathBuf, PlaybackError> {
    std::env::current_exe().map_err(PlaybackError::io("/proc/self/exe"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_of_places() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("acplb");
        std::fs::write(&bin, "").unwrap();
        let exe = Some(dir.path().join("playback"));
        assert_eq!(find(None, None, exe.clone(), None).unwrap(), bin);
        let err = find(Some(Path::new("/nope/acplb")), None, exe.clone(), None).unwrap_err();
        assert!(err.to_string().contains("/nope/acplb"), "{err}");
        let err = find(None, Some("/nope2".into()), exe, None).unwrap_err();
        assert!(err.to_string().contains("ACPLB_BIN"), "{err}");
        let found = find(None, None, None, Some(dir.path().as_os_str())).unwrap();
        assert_eq!(found, bin);
        assert!(find(None, None, None, None).is_err());
    }
}
