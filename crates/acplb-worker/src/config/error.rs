//! How a refused configuration is reported: every error names the file, the 1-based line and
//! what to do about it.

use std::path::Path;

/// Why `workers.toml` (or a repository's `.atm/config.toml`) was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file named explicitly does not exist.
    #[error("`{file}` does not exist\n  hint: {hint}")]
    Missing {
        /// The file.
        file: String,
        /// How to create it.
        hint: String,
    },
    /// The file exists but could not be read.
    #[error("cannot read `{file}`: {message}")]
    Read {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The file is not valid here, at `line`.
    #[error("{file}:{line}: {message}{}", hint.as_ref().map(|h| format!("\n  hint: {h}")).unwrap_or_default())]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: Option<String>,
    },
}

impl ConfigError {
    /// The 1-based line the error points at, when it points at one.
    pub fn line(&self) -> Option<usize> {
        match self {
            ConfigError::Invalid { line, .. } => Some(*line),
            ConfigError::Missing { .. } | ConfigError::Read { .. } => None,
        }
    }
}

/// One file's text as errors see it: its name and where its lines start.
#[derive(Debug)]
pub(crate) struct Located {
    file: String,
    /// Byte offsets of the line starts, for a binary search.
    starts: Vec<usize>,
}

impl Located {
    pub(crate) fn new(file: &Path, text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            file: file.display().to_string(),
            starts,
        }
    }

    /// The 1-based line of a byte offset.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|start| *start <= offset).max(1)
    }

    /// `file:line` of a byte offset.
    pub(crate) fn origin(&self, offset: usize) -> String {
        format!("{}:{}", self.file, self.line(offset))
    }

    /// An error at a byte offset.
    pub(crate) fn invalid(
        &self,
        offset: usize,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> ConfigError {
        ConfigError::Invalid {
            file: self.file.clone(),
            line: self.line(offset),
            message: message.into(),
            hint,
        }
    }
}

/// The text of a file that must be UTF-8; the error names the line of the first bad byte.
pub(crate) fn utf8<'a>(file: &Path, bytes: &'a [u8], what: &str) -> Result<&'a str, ConfigError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.split(|b| *b == b'\n').count();
        let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
        ConfigError::Invalid {
            file: file.display().to_string(),
            line,
            message: format!("the file is not valid UTF-8 (byte 0x{byte:02x})"),
            hint: Some(format!("save {what} as UTF-8 text")),
        }
    })
}

/// The known name closest to `wrong`, for "did you mean" hints (the composer file's rule).
pub(crate) use acplb_core::plugin::registry::closest;

/// The hint for an unknown key: a near miss, if any, then `label` and the known keys.
pub(crate) fn unknown_key_hint(wrong: &str, known: &[&str], label: &str) -> String {
    let list = known.join(", ");
    match closest(wrong, known.iter().copied()) {
        Some(near) => format!("did you mean `{near}`? {label}: {list}"),
        None => format!("{label}: {list}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based_and_found_by_offset() {
        let at = Located::new(Path::new("w.toml"), "a\nbb\n\nc");
        let lines: Vec<usize> = (0..8).map(|o| at.line(o)).collect();
        assert_eq!(lines, [1, 1, 2, 2, 2, 3, 4, 4]);
        assert_eq!(at.origin(3), "w.toml:2");
        assert_eq!(Located::new(Path::new("e"), "").line(0), 1);
    }

    #[test]
    fn near_misses_are_suggested_and_far_ones_not() {
        let known = ["prompt_template", "model", "cwd"];
        assert_eq!(closest("prompt_templat", known), Some("prompt_template"));
        assert_eq!(closest("modle", known), Some("model"));
        assert_eq!(closest("telemetry", known), None);
        assert_eq!(
            unknown_key_hint("modle", &known, "an agent takes"),
            "did you mean `model`? an agent takes: prompt_template, model, cwd"
        );
    }

    #[test]
    fn invalid_shows_file_line_and_hint() {
        let at = Located::new(Path::new("w.toml"), "x\ny\n");
        let e = at.invalid(2, "bad", Some("fix it".into()));
        assert_eq!(e.to_string(), "w.toml:2: bad\n  hint: fix it");
        assert_eq!(e.line(), Some(2));
    }
}
