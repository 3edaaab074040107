//! The release packaging's own code, without a release build: the npm launcher
//! (`packaging/npm/acplb/bin/acplb.js`) and the package and registry manifests
//! (`packaging/release.js`), run with the real `node`. `scripts/package-check` checks the built
//! packages end to end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail loudly and read top to bottom"
)]

mod launcher;
mod manifests;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's `packaging/` folder.
fn packaging() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging")
}

/// `node` with `args`; says plainly when there is no node (the packaging needs it).
fn node<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new("node")
        .args(args)
        .output()
        .expect("running `node` (Node.js is needed to build and test the npm packages)")
}

/// A file in `packaging/` as a JavaScript string literal.
fn js_path(file: &str) -> String {
    serde_json::to_string(packaging().join(file).to_str().unwrap()).unwrap()
}

/// The JSON a JavaScript expression evaluates to, with `release` and `launcher` bound to the two
/// modules.
fn eval_json(expression: &str) -> serde_json::Value {
    let script = format!(
        "const release = require({}); const launcher = require({});\
         process.stdout.write(JSON.stringify({expression}));",
        js_path("release.js"),
        js_path("npm/acplb/bin/acplb.js"),
    );
    let out = node(["-e", &script]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}
