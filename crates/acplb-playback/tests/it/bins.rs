//! The binaries the playback tests run: `playback` (built for these tests) and `acplb` (built by
//! `cargo test --workspace`, or here on first use when only this crate's tests run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub(crate) const PLAYBACK: &str = env!("CARGO_BIN_EXE_playback");

/// The corpus, relative to this crate.
pub(crate) fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../_artifacts/tests/scenarios")
}

/// `target/<profile>/acplb` next to the playback binary, built once if missing.
pub(crate) fn acplb() -> &'static Path {
    static ACPLB: OnceLock<PathBuf> = OnceLock::new();
    ACPLB.get_or_init(|| {
        let path = Path::new(PLAYBACK).with_file_name("acplb");
        if !path.is_file() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut build = Command::new(cargo);
            build.args(["build", "-p", "acplb", "--bin", "acplb"]);
            if path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|p| p == "release")
            {
                build.arg("--release");
            }
            let status = build
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building acplb failed");
        }
        assert!(path.is_file(), "no acplb at {}", path.display());
        path
    })
}

/// Runs `playback args…` with the acplb binary named, stdin closed.
pub(crate) fn playback(args: &[&str]) -> Output {
    Command::new(PLAYBACK)
        .args(args)
        .env("ACPLB_BIN", acplb())
        .stdin(Stdio::null())
        .output()
        .expect("playback runs")
}

/// Stdout and stderr as text, for assertion messages.
pub(crate) fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
