//! Every fixture of a folder decoded and compared with its insta snapshot, each difference
//! reported by name at the end instead of stopping at the first.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// A folder of `*.jsonl` fixtures and where their snapshots live.
pub(crate) struct Fixtures<'a> {
    /// The fixtures.
    pub(crate) dir: PathBuf,
    /// Shown in each snapshot's description: `decoded from {label}/{name}.jsonl`.
    pub(crate) label: &'a str,
    /// Snapshot folder, relative to this file.
    pub(crate) snapshots: &'a str,
    /// At least this many fixtures must be there.
    pub(crate) at_least: usize,
    /// The workspace path the fixtures use, shown as `[CWD]`.
    pub(crate) cwd: &'a str,
    /// More `(regex, replacement)` filters for this folder.
    pub(crate) filters: &'a [(&'a str, &'a str)],
}

/// Decodes every fixture with `decode` and compares it with its snapshot.
pub(crate) fn check_all(fixtures: &Fixtures<'_>, decode: impl Fn(&Path) -> String) {
    let mut paths: Vec<PathBuf> = fs::read_dir(&fixtures.dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= fixtures.at_least,
        "fixtures missing in {}",
        fixtures.dir.display()
    );
    let mut failed = Vec::new();
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let mut filters = vec![(
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "[UUID]",
        )];
        filters.extend_from_slice(fixtures.filters);
        filters.push((fixtures.cwd, "[CWD]"));
        let result = catch_unwind(AssertUnwindSafe(|| {
            let decoded = decode(path);
            insta::with_settings!({
                snapshot_path => fixtures.snapshots,
                prepend_module_to_snapshot => false,
                omit_expression => true,
                description => format!("decoded from {}/{name}.jsonl", fixtures.label),
                filters => filters,
            }, {
                insta::assert_snapshot!(name.as_str(), decoded);
            });
        }));
        if result.is_err() {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} fixtures differ from their snapshots: {failed:?}",
        failed.len(),
        paths.len()
    );
}
