//! `acplb worker` (`run`): the daemon in the foreground, until SIGTERM or SIGINT; SIGHUP
//! reloads its configuration.

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use acplb_core::runtime::Durability;
use acplb_core::sessions::registry::{Registry, RegistryWriter};
use acplb_worker::daemon::{self, Event};
use clap::Args;

/// Options of the daemon.
#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// The configuration file (default: ~/.config/acplb/workers.toml, or under
    /// $XDG_CONFIG_HOME). `--config PATH` says the same: a `-c/--config` value without `=` is a
    /// path here, never a Codex override (those are always KEY=VALUE).
    #[arg(long = "workers-config", value_name = "PATH", env = "ACPLB_WORKERS_CONFIG")]
    workers_config: Option<PathBuf>,
}

/// The file named by `--workers-config`, else by a `--config` value without `=`, and the
/// Codex overrides (`KEY=VALUE`) that are left.
fn split_config(cli: &[String], flag: Option<&PathBuf>) -> anyhow::Result<(Option<PathBuf>, Vec<String>)> {
    let (paths, overrides): (Vec<&String>, Vec<&String>) = cli.iter().partition(|v| !v.contains('='));
    let path = match (flag, paths.as_slice()) {
        (Some(p), []) => Some(p.clone()),
        (None, [one]) => Some(PathBuf::from(one.as_str())),
        (None, []) => None,
        _ => anyhow::bail!(
            "name one configuration file: --config PATH (or --workers-config PATH) once; Codex overrides are KEY=VALUE"
        ),
    };
    Ok((path, overrides.into_iter().cloned().collect()))
}

pub(super) fn run(cli: &crate::cli::Cli, args: &RunArgs) -> anyhow::Result<bool> {
    let (named, overrides) = split_config(&cli.config, args.workers_config.as_ref())?;
    let path = super::config_path(named.as_ref())?;
    let trusted = trusted_workspaces();
    let load = move || acplb_worker::config::load(&path, &|dir| trusted(dir));
    let config = load().map_err(|e| anyhow::anyhow!("{e}"));
    let log_dir = config
        .as_ref()
        .ok()
        .and_then(|c| c.settings.log_dir_or_default(|k| std::env::var(k).ok()));
    let _logs = logging(cli, log_dir.as_deref())?;
    let config = config?;
    let config_path = super::config_path(named.as_ref())?;
    let state = crate::sessions::state_dir()?;
    let (codex, found) = crate::codex_path::resolve(cli.codex.as_deref());
    if !found {
        tracing::warn!(codex = %codex.display(), "codex not found; workers will fail until it is installed or --codex is set");
    }
    let transport = crate::settings::transport(cli)?.transport;
    let registry = RegistryWriter::start(Registry::new(&state)).ok();
    let host = super::host::CodexHost {
        state: state.clone(),
        codex,
        overrides,
        transport,
        turn_timeout: cli.turn_timeout.limit(),
        shutdown_grace: config.settings.shutdown_timeout,
        durability: Durability {
            state_dir: state,
            journal_limit: crate::settings::journal_limit()?,
            registry,
        },
    };
    crate::serve::arm_exit_guard();
    let runtime = crate::serve::runtime()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        let (events, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::task::spawn_local(forward_signals(events));
        daemon::run(
            Rc::new(host),
            config_path,
            config,
            || load().map_err(|e| e.to_string()),
            rx,
        )
        .await
    })?;
    runtime.shutdown_timeout(Duration::from_millis(50));
    Ok(true)
}

/// Stderr (at `info` unless `RUST_LOG` says otherwise), `--log-file`, and one file per worker
/// under `log_dir` (at the log file's level), rotated at [`LOG_FILE_BYTES`], [`LOG_FILES_KEPT`] kept.
fn logging(
    cli: &crate::cli::Cli,
    log_dir: Option<&std::path::Path>,
) -> anyhow::Result<acplb_core::telemetry::LogGuard> {
    let mut problem = None;
    let extra: Option<acplb_core::telemetry::ExtraLayer> =
        match log_dir.map(|d| acplb_worker::logs::WorkerLogs::new(d, LOG_FILE_BYTES, LOG_FILES_KEPT)) {
            // The per-worker files log what the log file does (`RUST_LOG`, else `info`); unfiltered,
            // every dependency's `trace` event would be built and redacted.
            Some(Ok(layer)) => Some(Box::new(tracing_subscriber::Layer::with_filter(
                layer,
                acplb_core::telemetry::log_filter("info"),
            ))),
            Some(Err(e)) => {
                problem = Some(e.to_string());
                None
            }
            None => None,
        };
    let guard = acplb_core::telemetry::init_with(cli.log_file.as_deref(), "info", extra)?;
    if let Some(p) = problem {
        tracing::warn!("no per-worker log files: {p}");
    }
    Ok(guard)
}

/// A worker's log file is rotated at this size.
const LOG_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept per worker.
const LOG_FILES_KEPT: usize = 5;

/// Whether a workspace is on the trusted list (`acplb trust`): only then do its
/// `.atm/config.toml` overrides apply.
fn trusted_workspaces() -> impl Fn(&std::path::Path) -> bool {
    let list = crate::pipelines::user_config_dir()
        .map(|d| acplb_core::plugin::trust::TrustList::file(&d))
        .and_then(|f| acplb_core::plugin::trust::TrustList::load(&f).ok());
    move |dir| list.as_ref().is_some_and(|l| l.contains(dir))
}

/// SIGHUP → reload; SIGTERM, SIGINT → stop.
async fn forward_signals(events: tokio::sync::mpsc::UnboundedSender<Event>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut hup), Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::hangup()),
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot listen for signals; stop the daemon with SIGKILL");
        return;
    };
    loop {
        let event = tokio::select! {
            _ = hup.recv() => {
                tracing::info!("SIGHUP received; reloading the configuration");
                Event::Reload
            }
            _ = term.recv() => {
                tracing::info!("SIGTERM received; stopping");
                Event::Stop
            }
            _ = int.recv() => {
                tracing::info!("SIGINT received; stopping");
                Event::Stop
            }
        };
        if events.send(event).is_err() || event == Event::Stop {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_value_without_equals_names_the_file_and_overrides_stay_overrides() {
        let cli = vec!["model=\"x\"".to_owned(), "/etc/w.toml".to_owned()];
        let (path, rest) = split_config(&cli, None).unwrap();
        assert_eq!(path, Some(PathBuf::from("/etc/w.toml")));
        assert_eq!(rest, ["model=\"x\""]);
        let flag = PathBuf::from("/a.toml");
        assert_eq!(split_config(&[], Some(&flag)).unwrap().0, Some(flag.clone()));
        assert!(
            split_config(&["/b.toml".to_owned()], Some(&flag)).is_err(),
            "two files"
        );
        assert!(split_config(&["/b.toml".to_owned(), "/c.toml".to_owned()], None).is_err());
        assert_eq!(split_config(&[], None).unwrap(), (None, Vec::new()));
    }
}
