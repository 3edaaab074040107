//! Reading every registry file at once, without a lock: what `session/list` and
//! `acplb sessions list` show. A file or entry that cannot be read is reported, never fatal.

use std::io;
use std::path::Path;

use super::entry::Entry;
use super::error::RegistryError;
use super::file::Doc;

/// Every session the registry holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    /// The sessions, file by file (files in name order, sessions in file order).
    pub entries: Vec<Listed>,
    /// What could not be read, one line each, naming the file (and session) and the error.
    pub problems: Vec<String>,
}

/// A session and the registry file holding it.
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    /// The registry key (file name without `.json`).
    pub key: String,
    /// The entry.
    pub entry: Entry,
}

impl AsRef<Entry> for Listed {
    fn as_ref(&self) -> &Entry {
        &self.entry
    }
}

impl Listing {
    /// The entries without their keys.
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries.into_iter().map(|l| l.entry).collect()
    }
}

/// Reads every `<key>.json` in `dir`; a missing folder is an empty registry.
pub(super) fn read_all(dir: &Path) -> Result<Listing, RegistryError> {
    let mut listing = Listing::default();
    let mut files = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .filter_map(|e| key_of(&e.file_name().to_string_lossy()).map(|k| (k.to_owned(), e.path())))
            .collect::<Vec<_>>(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(listing),
        Err(source) => {
            return Err(RegistryError::Dir {
                path: dir.to_owned(),
                source,
            });
        }
    };
    files.sort();
    for (key, path) in files {
        read_file(&key, &path, &mut listing);
    }
    Ok(listing)
}

/// The key of a registry file name: `<key>.json`, not hidden (temporary files are).
fn key_of(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(".json")
        .filter(|k| !k.is_empty() && !k.starts_with('.'))
}

fn read_file(key: &str, path: &Path, listing: &mut Listing) {
    let bytes = match super::file::read_bytes(path) {
        Ok(b) => b,
        // Removed since the folder was listed: nothing to show.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(e) => {
            listing.problems.push(format!("`{}`: {e}", path.display()));
            return;
        }
    };
    let doc = match Doc::parse(&bytes) {
        Ok(d) => d,
        Err(e) => {
            listing
                .problems
                .push(format!("`{}` is not a valid registry file: {e}", path.display()));
            return;
        }
    };
    for (id, value) in &doc.sessions {
        match serde_json::from_str::<Entry>(value.get()) {
            Ok(entry) => listing.entries.push(Listed {
                key: key.to_owned(),
                entry,
            }),
            Err(e) => listing
                .problems
                .push(format!("`{}`: session `{id}`: {e}", path.display())),
        }
    }
}
