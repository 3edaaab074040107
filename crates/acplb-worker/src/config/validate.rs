//! Checks of paths against the file system: `cwd` must be an existing directory, `composer` an
//! existing file, and every path absolute once `~/` is expanded (a relative path would depend on
//! wherever the daemon happened to start).

use std::path::{Path, PathBuf};

use super::error::{ConfigError, Located};
use super::value::{self, Value};

/// `~` and `~/rest` made absolute with `home`; anything else as written.
pub(crate) fn expand_home(raw: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    let rest = match raw.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        _ => return Ok(PathBuf::from(raw)),
    };
    match home {
        Some(home) if rest.is_empty() => Ok(home.to_path_buf()),
        Some(home) => Ok(home.join(rest)),
        None => Err(format!("cannot expand `~` in `{raw}`: HOME is not set")),
    }
}

/// A string value naming an absolute path, `~/` expanded.
pub(crate) fn absolute_path(
    at: &Located,
    key: &str,
    v: &Value<'_>,
    home: Option<&Path>,
    example: &str,
) -> Result<PathBuf, ConfigError> {
    let raw = value::string(at, key, v, example)?;
    let hint = || {
        Some(format!(
            "give an absolute path or one under `~/`, e.g. `{example}`"
        ))
    };
    if raw.trim().is_empty() {
        return Err(at.invalid(v.span().start, format!("`{key}` is empty"), hint()));
    }
    let path = expand_home(&raw, home).map_err(|e| at.invalid(v.span().start, e, hint()))?;
    if !path.is_absolute() {
        return Err(at.invalid(
            v.span().start,
            format!("`{key}` is the relative path `{raw}`"),
            hint(),
        ));
    }
    Ok(path)
}

/// `cwd`: an absolute path to an existing directory.
pub(crate) fn cwd(at: &Located, v: &Value<'_>, home: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let example = "cwd = \"~/src/project\"";
    let path = absolute_path(at, "cwd", v, home, example)?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => Ok(path),
        Ok(_) => Err(at.invalid(
            v.span().start,
            format!("`cwd` `{}` is not a directory", path.display()),
            Some("`cwd` is the repository the agent works in: name its directory".into()),
        )),
        Err(e) => Err(at.invalid(
            v.span().start,
            format!("`cwd` `{}` does not exist ({e})", path.display()),
            Some("create the directory or fix the path".into()),
        )),
    }
}

/// `composer`: an absolute path to an existing file.
pub(crate) fn composer(at: &Located, v: &Value<'_>, home: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let example = "composer = \"~/.config/acplb/bob.composer.toml\"";
    let path = absolute_path(at, "composer", v, home, example)?;
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(at.invalid(
            v.span().start,
            format!("`composer` `{}` is not a file", path.display()),
            Some("name a composer.toml file".into()),
        )),
        Err(e) => Err(at.invalid(
            v.span().start,
            format!("`composer` file `{}` does not exist ({e})", path.display()),
            Some("create it (see composer.toml.example) or remove the `composer` line".into()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_expanded_only_at_the_start() {
        let home = Some(Path::new("/home/me"));
        assert_eq!(expand_home("~/src", home).unwrap(), PathBuf::from("/home/me/src"));
        assert_eq!(expand_home("~", home).unwrap(), PathBuf::from("/home/me"));
        assert_eq!(expand_home("/abs/~/x", home).unwrap(), PathBuf::from("/abs/~/x"));
        assert_eq!(expand_home("~bob/x", home).unwrap(), PathBuf::from("~bob/x"));
        assert!(expand_home("~/x", None).unwrap_err().contains("HOME is not set"));
        assert_eq!(expand_home("rel", None).unwrap(), PathBuf::from("rel"));
    }
}
