//! One registry file: its format, its lock, and the read-modify-write every update goes
//! through (lock, read, change, write a `0600` temporary file, check the version, rename).
//!
//! Writers take an exclusive `flock` on `<key>.json.lock` (the kernel drops it when a writer
//! dies, even by SIGKILL). Readers take no lock: the file is only ever replaced by a rename, so
//! they see the old or the new version whole. The version check just before the rename catches
//! a writer that skipped the lock (an older or foreign tool): the whole round is tried again.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use super::error::RegistryError;
use crate::sessions::files::{self, Access};

/// The sessions of one file, by session id, each as the JSON text stored: an update parses
/// only the entry it changes, and entries a newer acplb wrote keep every field.
pub(super) type Sessions = BTreeMap<String, Box<RawValue>>;

/// A registry file's contents.
#[derive(Debug, Default)]
pub(super) struct Doc {
    /// Incremented by every write.
    pub(super) version: u64,
    pub(super) sessions: Sessions,
    /// Top-level fields this acplb does not know, written back as they were.
    rest: BTreeMap<String, Box<RawValue>>,
}

impl Doc {
    /// Parses a registry file: a JSON object with a numeric `version` and a `sessions` object
    /// (in one pass; each session is kept as its text).
    pub(super) fn parse(bytes: &[u8]) -> Result<Doc, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The file's text: one line per session.
    fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            version: u64,
            sessions: &'a Sessions,
            #[serde(flatten)]
            rest: &'a BTreeMap<String, Box<RawValue>>,
        }
        let mut bytes = serde_json::to_vec_pretty(&Out {
            version: self.version,
            sessions: &self.sessions,
            rest: &self.rest,
        })?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

impl<'de> serde::Deserialize<'de> for Doc {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Doc, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Doc;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a registry object with `version` and `sessions`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let mut doc = Doc::default();
                let mut version = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "version" => version = Some(map.next_value()?),
                        "sessions" => doc.sessions = map.next_value()?,
                        _ => {
                            let value = map.next_value()?;
                            doc.rest.insert(key, value);
                        }
                    }
                }
                doc.version = version.ok_or_else(|| serde::de::Error::missing_field("version"))?;
                Ok(doc)
            }
        }
        de.deserialize_map(Fields)
    }
}

/// The version of the registry file at `path` (0 when there is none). Files this module wrote
/// start with it (`{\n  "version": N,`), so only their first bytes are read; a file written
/// otherwise is parsed whole.
fn current_version(path: &Path) -> Result<u64, RegistryError> {
    use std::io::Read as _;
    #[derive(serde::Deserialize)]
    struct VersionOnly {
        version: u64,
    }
    let read_error = |source| RegistryError::Read {
        path: path.to_owned(),
        source,
    };
    let mut head = [0u8; 48];
    let n = match files::open(path, Access::Read) {
        Ok(f) => f.take(head.len() as u64).read(&mut head).map_err(read_error)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(read_error(e)),
    };
    if let Some(version) = version_in_head(&head[..n]) {
        return Ok(version);
    }
    let bytes = read_bytes(path).map_err(read_error)?;
    serde_json::from_slice::<VersionOnly>(&bytes)
        .map(|v| v.version)
        .map_err(|source| RegistryError::Parse {
            path: path.to_owned(),
            source,
        })
}

/// The version at the start of a file this module wrote (`{\n  "version": N,`).
fn version_in_head(head: &[u8]) -> Option<u64> {
    let rest = head.strip_prefix(b"{\n  \"version\": ")?;
    let end = rest.iter().position(|b| !b.is_ascii_digit())?;
    if rest.get(end) != Some(&b',') {
        return None;
    }
    std::str::from_utf8(&rest[..end]).ok()?.parse().ok()
}

/// The bytes of the registry file at `path`: never through a link, never a FIFO (which would
/// wait for a writer for ever).
pub(super) fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    files::open(path, Access::Read)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads and parses a registry file; a missing file is an empty registry at version 0.
pub(super) fn read(path: &Path) -> Result<Doc, RegistryError> {
    match read_bytes(path) {
        Ok(bytes) => Doc::parse(&bytes).map_err(|source| RegistryError::Parse {
            path: path.to_owned(),
            source,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Doc::default()),
        Err(source) => Err(RegistryError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// How one update goes: how long it waits for the lock, how many rounds it tries.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) lock_wait: Duration,
    pub(super) tries: u32,
}

/// Locks `path`'s lock file, then reads the file, lets `change` edit its sessions (`true` when
/// it changed something) and writes it back at the next version. Returns whether it wrote.
pub(super) fn modify(
    path: &Path,
    limits: Limits,
    mut change: impl FnMut(&mut Sessions) -> bool,
) -> Result<bool, RegistryError> {
    let lock_path = lock_path(path);
    let mut lock = fd_lock::RwLock::new(open_lock(&lock_path)?);
    locked(&mut lock, &lock_path, limits.lock_wait, || {
        for _ in 0..limits.tries {
            let mut doc = read(path)?;
            let read_version = doc.version;
            if !change(&mut doc.sessions) {
                return Ok(false);
            }
            doc.version = read_version + 1;
            let bytes = doc.to_bytes().map_err(|e| write_error(path, e.into()))?;
            let tmp = write_temp(path, &bytes).map_err(|e| write_error(path, e))?;
            // Compare and swap: a writer that did not take the lock may have replaced the file
            // since it was read; then this round is done again on top of its change.
            let now = current_version(path)?;
            if now != read_version {
                tracing::warn!(file = %path.display(), read_version, now, "registry file changed under its lock; retrying");
                continue;
            }
            tmp.persist(path).map_err(|e| write_error(path, e.error))?;
            return Ok(true);
        }
        Err(RegistryError::Conflict {
            path: path.to_owned(),
            tries: limits.tries,
        })
    })
}

/// The lock file beside a registry file.
pub(super) fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

fn open_lock(lock_path: &Path) -> Result<File, RegistryError> {
    files::open(lock_path, Access::ReadWriteCreate).map_err(|source| RegistryError::Lock {
        path: lock_path.to_owned(),
        source,
    })
}

/// Runs `body` holding the lock, which is polled with a growing pause (1 ms up to 8 ms, so a
/// waiter gets its turn soon after a release) until `wait` has passed.
fn locked<T>(
    lock: &mut fd_lock::RwLock<File>,
    lock_path: &Path,
    wait: Duration,
    body: impl FnOnce() -> Result<T, RegistryError>,
) -> Result<T, RegistryError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match lock.try_write() {
            // The guard lives until `body` returns.
            Ok(_guard) => return body(),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(source) => {
                return Err(RegistryError::Lock {
                    path: lock_path.to_owned(),
                    source,
                });
            }
        }
        if start.elapsed() >= wait {
            return Err(RegistryError::LockTimeout {
                path: lock_path.to_owned(),
                waited: start.elapsed(),
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(8));
    }
}

/// Writes `bytes` to a `0600` temporary file beside `path`, flushed to disk, not yet renamed.
fn write_temp(path: &Path, bytes: &[u8]) -> io::Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_data()?;
    Ok(tmp)
}

fn write_error(path: &Path, source: io::Error) -> RegistryError {
    RegistryError::Write {
        path: path.to_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_read_from_the_head_of_files_written_here() {
        let mut doc = Doc {
            version: 1234,
            ..Doc::default()
        };
        doc.sessions
            .insert("s".into(), RawValue::from_string("{\"a\":1}".into()).unwrap());
        let bytes = doc.to_bytes().unwrap();
        assert_eq!(version_in_head(&bytes[..48.min(bytes.len())]), Some(1234));
        assert_eq!(Doc::parse(&bytes).unwrap().version, 1234);
        for other in [
            &b"{\"version\":3,\"sessions\":{}}"[..],
            b"{\n  \"version\": 3}",
            b"{\n  \"version\": x,",
        ] {
            assert_eq!(version_in_head(other), None, "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn a_registry_without_version_or_with_bad_sessions_is_refused() {
        for bad in [
            &b"{\"sessions\": {}}"[..],
            b"{\"version\": 1, \"sessions\": []}",
            b"[]",
            b"{\"version\": -1}",
        ] {
            assert!(Doc::parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let doc = Doc::parse(b"{\"version\": 2}").unwrap();
        assert_eq!((doc.version, doc.sessions.len()), (2, 0));
    }
}
