//! acplb's own settings file, `$XDG_CONFIG_HOME/acplb/config.toml` (else
//! `~/.config/acplb/config.toml`): what the command line and the environment leave open: the
//! Codex transport (`transport = "app-server" | "exec"`) and how large one session's journal
//! may grow (`[sessions] journal_limit_mb`, default 256); how long one `acplb mcp codex` call
//! may run (`request_timeout_secs`, default 300).

use std::path::Path;

use acplb_codex::Transport;
use anyhow::{Context as _, bail};
use serde::Deserialize;

use crate::cli::Cli;

/// The file's keys; any other is an error (a typo must not be ignored silently).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    transport: Option<String>,
    request_timeout_secs: Option<u64>,
    /// `[roles.<name>]` presets, read by `roles.rs`.
    roles: Option<toml::Table>,
    sessions: Option<Sessions>,
}

/// `[sessions]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sessions {
    journal_limit_mb: Option<u64>,
}

/// The settings file, if there is one.
fn settings_path() -> Option<std::path::PathBuf> {
    crate::pipelines::user_config_dir()
        .map(|d| d.join("acplb").join("config.toml"))
        .filter(|p| p.exists())
}

fn read(path: &Path) -> anyhow::Result<File> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The size limit of one session journal, in bytes: `[sessions] journal_limit_mb`, else 256 MiB.
pub(crate) fn journal_limit() -> anyhow::Result<u64> {
    let Some(path) = settings_path() else {
        return Ok(acplb_core::sessions::journal::DEFAULT_LIMIT);
    };
    limit_from_file(&path)
}

fn limit_from_file(path: &Path) -> anyhow::Result<u64> {
    match read(path)?.sessions.and_then(|s| s.journal_limit_mb) {
        None => Ok(acplb_core::sessions::journal::DEFAULT_LIMIT),
        Some(0) => bail!(
            "{}: `sessions.journal_limit_mb` must be at least 1",
            path.display()
        ),
        Some(mb) => Ok(mb.saturating_mul(1 << 20)),
    }
}

/// How long one `acplb mcp codex` call may run: `--request-timeout`, else the file's
/// `request_timeout_secs`, else 300 s.
pub(crate) fn request_timeout(flag: Option<u64>) -> anyhow::Result<std::time::Duration> {
    let secs = match (flag, settings_path()) {
        (Some(s), _) => s,
        (None, Some(path)) => match read(&path)?.request_timeout_secs {
            Some(0) => bail!("{}: `request_timeout_secs` must be at least 1", path.display()),
            Some(s) => s,
            None => return Ok(acplb_mcp::DEFAULT_REQUEST_TIMEOUT),
        },
        (None, None) => return Ok(acplb_mcp::DEFAULT_REQUEST_TIMEOUT),
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// The role `--role` names, from the settings file's `[roles.<name>]`.
pub(crate) fn role(name: Option<&str>) -> anyhow::Result<Option<crate::roles::Role>> {
    let Some(wanted) = name else { return Ok(None) };
    let Some(path) = settings_path() else {
        bail!("--role {wanted}: there is no acplb config.toml with `[roles.{wanted}]`");
    };
    let file = read(&path)?;
    crate::roles::load(Some(wanted), file.roles.as_ref(), &path.display().to_string())
}

/// The transport to run and where that choice came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) transport: Transport,
    pub(crate) from: String,
}

/// `--transport` / `ACPLB_TRANSPORT`, else the settings file, else the default.
pub(crate) fn transport(cli: &Cli) -> anyhow::Result<Choice> {
    if let Some(crate::cli::TransportArg(Some(transport))) = cli.transport {
        let from = if std::env::var_os("ACPLB_TRANSPORT").is_some() {
            "ACPLB_TRANSPORT or --transport"
        } else {
            "--transport"
        };
        return Ok(Choice {
            transport,
            from: from.to_owned(),
        });
    }
    match settings_path() {
        Some(path) => from_file(&path),
        None => Ok(Choice {
            transport: Transport::default(),
            from: "the default".to_owned(),
        }),
    }
}

fn from_file(path: &Path) -> anyhow::Result<Choice> {
    let Some(value) = read(path)?.transport else {
        return Ok(Choice {
            transport: Transport::default(),
            from: "the default".to_owned(),
        });
    };
    match value.parse::<Transport>() {
        Ok(transport) => Ok(Choice {
            transport,
            from: path.display().to_string(),
        }),
        Err(e) => bail!("{}: `transport`: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_names_a_transport_and_typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "transport = \"exec\"\n").unwrap();
        assert_eq!(from_file(&path).unwrap().transport, Transport::Exec);
        std::fs::write(&path, "transport = \"grpc\"\n").unwrap();
        let e = from_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("unknown transport `grpc`; it is one of: app-server, exec"),
            "{e}"
        );
        std::fs::write(&path, "transprot = \"exec\"\n").unwrap();
        let e = from_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("unknown field `transprot`") && e.contains("line 1"),
            "{e}"
        );
        std::fs::write(&path, "").unwrap();
        assert_eq!(from_file(&path).unwrap().transport, Transport::AppServer);
    }

    #[test]
    fn the_journal_limit_is_in_megabytes_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[sessions]\njournal_limit_mb = 2\n").unwrap();
        assert_eq!(limit_from_file(&path).unwrap(), 2 << 20);
        std::fs::write(&path, "transport = \"exec\"\n").unwrap();
        assert_eq!(
            limit_from_file(&path).unwrap(),
            acplb_core::sessions::journal::DEFAULT_LIMIT
        );
        std::fs::write(&path, "[sessions]\njournal_limit_mb = 0\n").unwrap();
        assert!(
            limit_from_file(&path)
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        std::fs::write(&path, "[sessions]\njournal_mb = 3\n").unwrap();
        assert!(
            limit_from_file(&path)
                .unwrap_err()
                .to_string()
                .contains("unknown field `journal_mb`")
        );
    }
}
