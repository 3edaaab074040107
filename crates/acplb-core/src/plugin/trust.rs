//! The user's list of trusted workspaces, `<config dir>/acplb/trusted.toml`: a workspace's own
//! `composer.toml` is repository content, honoured only once its directory is on this list
//! (`acplb trust DIR`). See ADR 0007.
//!
//! ```toml
//! workspaces = ["/home/me/src/project"]
//! ```

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The trust list's file name under `<config dir>/acplb/`.
pub const TRUST_FILE: &str = "trusted.toml";

/// Why the trust list could not be read or written.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrustError {
    /// The file exists but could not be read.
    #[error("cannot read `{file}`: {message}")]
    Read {
        /// The trust file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The file is not a valid trust list.
    #[error("`{file}` is not a valid trust list: {message}")]
    Invalid {
        /// The trust file.
        file: String,
        /// What is wrong (with its line).
        message: String,
    },
    /// A path that is not UTF-8 cannot be written to the list.
    #[error("cannot trust `{path}`: acplb records only UTF-8 paths")]
    NotUtf8 {
        /// The path, lossily shown.
        path: String,
    },
    /// Writing the file failed.
    #[error("cannot write `{file}`: {message}")]
    Write {
        /// The trust file.
        file: String,
        /// The OS error.
        message: String,
    },
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustToml {
    #[serde(default)]
    workspaces: Vec<String>,
}

/// The trusted workspaces, as canonical paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustList {
    workspaces: Vec<PathBuf>,
}

impl TrustList {
    /// The trust file under the user config dir.
    pub fn file(config_dir: &Path) -> PathBuf {
        config_dir.join("acplb").join(TRUST_FILE)
    }

    /// Reads `file`; a missing file is an empty list.
    pub fn load(file: &Path) -> Result<Self, TrustError> {
        let text = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(TrustError::Read {
                    file: file.display().to_string(),
                    message: e.to_string(),
                });
            }
        };
        let invalid = |message: String| TrustError::Invalid {
            file: file.display().to_string(),
            message,
        };
        let text = std::str::from_utf8(&text).map_err(|e| invalid(e.to_string()))?;
        let parsed: TrustToml = toml::from_str(text).map_err(|e| invalid(e.to_string().trim().to_owned()))?;
        Ok(Self {
            workspaces: parsed.workspaces.into_iter().map(PathBuf::from).collect(),
        })
    }

    /// The trusted workspaces, in the order they were added.
    pub fn workspaces(&self) -> &[PathBuf] {
        &self.workspaces
    }

    /// Whether `workspace` is trusted: its canonical path is on the list (exactly: trusting a
    /// directory does not trust the directories below it, which may be other repositories).
    pub fn contains(&self, workspace: &Path) -> bool {
        let Ok(real) = std::fs::canonicalize(workspace) else {
            return false;
        };
        self.workspaces.contains(&real)
    }

    /// Adds a canonical path; `false` when it was already there.
    pub fn add(&mut self, workspace: PathBuf) -> Result<bool, TrustError> {
        if workspace.to_str().is_none() {
            return Err(TrustError::NotUtf8 {
                path: workspace.display().to_string(),
            });
        }
        if self.workspaces.contains(&workspace) {
            return Ok(false);
        }
        self.workspaces.push(workspace);
        Ok(true)
    }

    /// Removes a path; `false` when it was not there.
    pub fn remove(&mut self, workspace: &Path) -> bool {
        let before = self.workspaces.len();
        self.workspaces.retain(|w| w != workspace);
        self.workspaces.len() != before
    }

    /// Writes the list to `file` atomically (a temporary file in the same directory, renamed
    /// over it), readable and writable by the user only.
    pub fn save(&self, file: &Path) -> Result<(), TrustError> {
        let failed = |e: &dyn std::fmt::Display| TrustError::Write {
            file: file.display().to_string(),
            message: e.to_string(),
        };
        let dir = file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
        // `tempfile` creates the file with mode 0600; the rename keeps it.
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed(&e))?;
        tmp.write_all(self.to_toml().as_bytes()).map_err(|e| failed(&e))?;
        tmp.as_file().sync_all().map_err(|e| failed(&e))?;
        tmp.persist(file).map_err(|e| failed(&e.error))?;
        Ok(())
    }

    fn to_toml(&self) -> String {
        let mut out = String::from(
            "# Workspaces whose own composer.toml acplb honours.\n# Change with `acplb trust DIR` and `acplb untrust DIR`.\nworkspaces = [\n",
        );
        for w in &self.workspaces {
            // `add` admits only UTF-8 paths; a TOML string value escapes what needs it.
            let quoted = toml::Value::String(w.to_string_lossy().into_owned()).to_string();
            out.push_str("    ");
            out.push_str(&quoted);
            out.push_str(",\n");
        }
        out.push_str("]\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_missing_file_trusts_nothing_and_a_saved_list_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = TrustList::file(dir.path());
        let mut list = TrustList::load(&file).unwrap();
        assert!(list.workspaces().is_empty());
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let odd = PathBuf::from("/tmp/with \"quote\" and \\ backslash");
        assert!(list.add(ws.clone()).unwrap());
        assert!(!list.add(ws.clone()).unwrap(), "added once");
        assert!(list.add(odd.clone()).unwrap());
        list.save(&file).unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let back = TrustList::load(&file).unwrap();
        assert_eq!(back.workspaces(), [ws.clone(), odd.clone()]);
        assert!(back.contains(dir.path()));
        assert!(
            !back.contains(&dir.path().join("sub")),
            "only the directory itself"
        );
        let mut back = back;
        assert!(back.remove(&odd));
        assert!(!back.remove(&odd));
        back.save(&file).unwrap();
        assert_eq!(TrustList::load(&file).unwrap().workspaces(), [ws]);
    }

    #[test]
    fn a_broken_list_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trusted.toml");
        std::fs::write(&file, "workspaces = [\n  3,\n]\n").unwrap();
        let err = TrustList::load(&file).unwrap_err().to_string();
        assert!(
            err.contains("is not a valid trust list") && err.contains("line 2"),
            "{err}"
        );
        std::fs::write(&file, "trusted = []\n").unwrap();
        assert!(TrustList::load(&file).is_err());
    }
}
