//! acplb's own settings file, `$XDG_CONFIG_HOME/acplb/config.toml` (else
//! `~/.config/acplb/config.toml`): what the command line and the environment leave open. Today
//! that is the Codex transport (`transport = "app-server" | "exec"`).

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
}

/// The transport to run and where that choice came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    pub(crate) transport: Transport,
    pub(crate) from: String,
}

/// `--transport` / `ACPLB_TRANSPORT`, else the settings file, else the default.
pub(crate) fn transport(cli: &Cli) -> anyhow::Result<Choice> {
    if let Some(transport) = cli.transport {
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
    let path = crate::pipelines::user_config_dir().map(|d| d.join("acplb").join("config.toml"));
    match path {
        Some(path) if path.exists() => from_file(&path),
        _ => Ok(Choice {
            transport: Transport::default(),
            from: "the default".to_owned(),
        }),
    }
}

fn from_file(path: &Path) -> anyhow::Result<Choice> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file: File = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let Some(value) = file.transport else {
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
}
