//! Child processes for tests across processes: the test binary runs itself with
//! `--exact <child test>`; the child test does its work only when the environment names its
//! role (an index and a folder to work in).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const INDEX_ENV: &str = "ACPLB_TEST_CHILD_INDEX";
const DIR_ENV: &str = "ACPLB_TEST_CHILD_DIR";

/// Starts this test binary running only `test`, as child `index` working in `dir`.
pub fn spawn(test: &str, index: usize, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(INDEX_ENV, index.to_string())
        .env(DIR_ENV, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// In a child: its index and folder. `None` in a normal test run.
pub fn role() -> Option<(usize, PathBuf)> {
    let index = std::env::var(INDEX_ENV).ok()?.parse().unwrap();
    Some((index, PathBuf::from(std::env::var_os(DIR_ENV)?)))
}
