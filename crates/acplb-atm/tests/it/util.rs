//! Shared helpers: fixture trees copied into temp Claude roots, and raw inbox access.

use std::path::{Path, PathBuf};

use acplb_atm::MailStore;
use serde_json::Value;
use serde_json::value::RawValue;

/// `tests/fixtures/<rel>`.
pub(crate) fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// A temp Claude root holding the ATM 1.1.2 `teams/demo` tree.
pub(crate) fn v112_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    copy_tree(&fixture("v1.1.2-files/teams"), &root.path().join("teams"));
    root
}

/// A temp Claude root with an empty `teams/demo/inboxes/`.
pub(crate) fn empty_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("teams/demo/inboxes")).unwrap();
    root
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub(crate) fn store(root: &Path, identity: &str) -> MailStore {
    MailStore::new(root, identity, "demo").unwrap()
}

pub(crate) fn inbox(root: &Path, agent: &str) -> PathBuf {
    root.join("teams/demo/inboxes").join(format!("{agent}.json"))
}

/// Each record of an inbox as its exact raw text.
pub(crate) fn raw_records(text: &str) -> Vec<String> {
    let raws: Vec<&RawValue> = serde_json::from_str(text).unwrap();
    raws.iter().map(|r| r.get().to_owned()).collect()
}

/// Each record of an inbox as a value.
pub(crate) fn records(path: &Path) -> Vec<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
