//! Child processes: the test binary runs itself with `--exact <child test>`; the child test
//! does its work only when the environment names its role.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const INDEX_ENV: &str = "ACPLB_TEST_QUEUE_CHILD";
const WORK_ENV: &str = "ACPLB_TEST_QUEUE_WORK";

/// Starts this test binary running only `test`, as child `index` working in `work`.
pub fn spawn(test: &str, index: usize, work: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(INDEX_ENV, index.to_string())
        .env(WORK_ENV, work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// In a child: its index and work dir. `None` in a normal test run.
pub fn role() -> Option<(usize, PathBuf)> {
    let index = std::env::var(INDEX_ENV).ok()?.parse().unwrap();
    Some((index, PathBuf::from(std::env::var_os(WORK_ENV)?)))
}
