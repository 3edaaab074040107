//! The log files themselves: one size-rotated file per worker, opened on its first line.

use std::collections::HashMap;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};

use super::LogError;

/// The directory of worker logs and the open file of every worker that has logged.
#[derive(Debug)]
pub(super) struct WorkerFiles {
    dir: PathBuf,
    max_bytes: u64,
    keep: usize,
    open: Mutex<HashMap<String, Rotating>>,
    errors: Arc<AtomicU64>,
}

/// One worker's current file and how many bytes it holds.
struct Rotating {
    path: PathBuf,
    file: FileRotate<AppendCount>,
    len: u64,
}

impl std::fmt::Debug for Rotating {
    // `FileRotate<AppendCount>` is not `Debug`: its suffix scheme is not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotating")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl WorkerFiles {
    /// Creates `dir` (0700) if it is missing; files are opened later, one per worker.
    pub(super) fn new(dir: &Path, max_bytes: u64, keep: usize) -> Result<Self, LogError> {
        if max_bytes == 0 {
            return Err(LogError::ZeroMaxBytes);
        }
        create_private_dir(dir).map_err(|source| LogError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Self {
            dir: dir.to_path_buf(),
            max_bytes,
            keep,
            open: Mutex::new(HashMap::new()),
            errors: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The counter of lines that could not be written.
    pub(super) fn errors(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.errors)
    }

    /// Appends one formatted line to `worker`'s file; a failure is counted, never reported,
    /// because the only place to report it would be the log itself.
    pub(super) fn write_line(&self, worker: &str, line: &[u8]) {
        if self.try_write_line(worker, line).is_err() {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn try_write_line(&self, worker: &str, line: &[u8]) -> io::Result<()> {
        // A panic elsewhere while the lock was held leaves at worst a half-written line.
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let file_name = format!("{}.log", file_stem(worker));
        let rotating = match open.entry(file_name) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                let path = self.dir.join(entry.key());
                entry.insert(self.open_rotating(path)?)
            }
        };
        // Rotate before a line that would overflow a non-empty file, so lines are never split
        // across files and a file exceeds `max_bytes` only when one line does.
        let line_len = u64::try_from(line.len()).unwrap_or(u64::MAX);
        if rotating.len > 0 && rotating.len.saturating_add(line_len) > self.max_bytes {
            self.rotate(rotating)?;
        }
        rotating.file.write_all(line)?;
        rotating.len = rotating.len.saturating_add(line_len);
        Ok(())
    }

    fn open_rotating(&self, path: PathBuf) -> io::Result<Rotating> {
        // `FileRotate::new` panics when it cannot create the directory, so make sure it exists.
        create_private_dir(&self.dir)?;
        let mut options = OpenOptions::new();
        options.read(true).create(true).append(true).mode(0o600);
        // Probe the open here: `FileRotate` would swallow the error and drop every line.
        let len = options.open(&path)?.metadata()?.len();
        let file = FileRotate::new(
            &path,
            AppendCount::new(self.keep),
            // acplb decides when to rotate (whole lines, see `try_write_line`); the crate does the
            // renaming and pruning.
            ContentLimit::None,
            Compression::None,
            Some(options),
        );
        Ok(Rotating { path, file, len })
    }

    /// Renames the current file to `.1` (shifting older ones, deleting beyond `keep`) and starts
    /// a new one.
    fn rotate(&self, rotating: &mut Rotating) -> io::Result<()> {
        // A fresh writer rescans the old files: the crate asserts that the files it remembers
        // still exist, and someone may have deleted one since.
        *rotating = self.open_rotating(rotating.path.clone())?;
        rotating.file.rotate()?;
        rotating.len = 0;
        Ok(())
    }
}

/// Creates `dir` and its missing parents, each 0700.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    if fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// `worker` as a file name: anything but letters, digits, `@`, `.`, `_` and `-` becomes `_`,
/// and so does a leading `.`, so a name never leaves the directory or hides its file.
fn file_stem(worker: &str) -> String {
    let mut stem: String = worker
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '@' | '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() || stem.starts_with('.') {
        stem.insert(0, '_');
    }
    stem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_name_stays_inside_the_directory() {
        assert_eq!(file_stem("ada@team-1"), "ada@team-1");
        assert_eq!(file_stem("../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_stem(".hidden@t"), "_.hidden@t");
        assert_eq!(file_stem(""), "_");
        assert_eq!(file_stem("a b/c@t"), "a_b_c@t");
    }

    #[test]
    fn a_zero_limit_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            WorkerFiles::new(dir.path(), 0, 5),
            Err(LogError::ZeroMaxBytes)
        ));
    }

    #[test]
    fn a_deleted_old_file_does_not_break_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let files = WorkerFiles::new(dir.path(), 10, 3).unwrap();
        for n in 0..4 {
            files.write_line("w@t", format!("line {n}\n").as_bytes());
        }
        fs::remove_file(dir.path().join("w@t.log.1")).unwrap();
        for n in 4..8 {
            files.write_line("w@t", format!("line {n}\n").as_bytes());
        }
        assert_eq!(files.errors().load(Ordering::Relaxed), 0);
        let newest = fs::read_to_string(dir.path().join("w@t.log")).unwrap();
        assert_eq!(newest, "line 7\n");
    }
}
