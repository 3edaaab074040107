//! The worker daemon: one worker per enabled agent, the control socket, a configuration
//! reload that starts, stops and restarts only the agents that changed, and an orderly stop.

pub mod control;
mod serve_control;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::config::{self, AgentConfig, AgentName, WorkersConfig};
use crate::host::Host;
use crate::status::DaemonStatus;
use crate::worker::WorkerHandle;

/// What the binary tells the daemon (from its signals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Read the configuration again (`SIGHUP`).
    Reload,
    /// Stop every worker and return (`SIGTERM`, `SIGINT`).
    Stop,
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// Another daemon serves this state dir.
    #[error("another worker daemon is already running for this state directory (it answers at {}); stop it first", path.display())]
    AlreadyRunning {
        /// Its socket.
        path: PathBuf,
    },
    /// The control socket could not be set up.
    #[error("cannot open the control socket {}: {source}", path.display())]
    Socket {
        /// The socket.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The workers, shared by the daemon loop and the control socket's handlers.
pub(crate) struct Workers {
    pub(crate) running: BTreeMap<AgentName, (AgentConfig, WorkerHandle)>,
    pub(crate) config_path: PathBuf,
}

impl Workers {
    pub(crate) fn status(&self) -> DaemonStatus {
        DaemonStatus {
            pid: std::process::id(),
            config: self.config_path.display().to_string(),
            workers: self.running.values().map(|(_, w)| w.status()).collect(),
        }
    }
}

/// Runs the daemon on the current `LocalSet` until [`Event::Stop`] (or the event channel
/// closes). `reload` reads the configuration again; an invalid one is refused and the old
/// one stays in force.
pub async fn run(
    host: Rc<dyn Host>,
    config_path: PathBuf,
    initial: WorkersConfig,
    reload: impl Fn() -> Result<WorkersConfig, String>,
    mut events: UnboundedReceiver<Event>,
) -> Result<(), DaemonError> {
    let listener = serve_control::bind(host.state_dir())?;
    let workers = Rc::new(RefCell::new(Workers {
        running: BTreeMap::new(),
        config_path,
    }));
    let mut current = initial;
    for note in &current.notes {
        tracing::warn!("{note}");
    }
    for agent in current.enabled_agents() {
        start(&workers, &host, agent.clone(), &current);
    }
    tracing::info!(workers = workers.borrow().running.len(), "worker daemon running");
    let control = tokio::task::spawn_local(serve_control::serve(listener.listener, workers.clone()));
    // `Stop`, or the channel closed.
    while let Some(Event::Reload) = events.recv().await {
        match reload() {
            Ok(next) => {
                apply(&workers, &host, &current, &next).await;
                current = next;
            }
            Err(e) => tracing::error!("the new configuration is refused; the old one stays in force: {e}"),
        }
    }
    tracing::info!("stopping every worker");
    control.abort();
    let all: Vec<_> = std::mem::take(&mut workers.borrow_mut().running)
        .into_values()
        .collect();
    futures::future::join_all(all.into_iter().map(|(_, w)| w.stop())).await;
    drop(listener.guard);
    tracing::info!("worker daemon stopped");
    Ok(())
}

fn start(workers: &Rc<RefCell<Workers>>, host: &Rc<dyn Host>, agent: AgentConfig, config: &WorkersConfig) {
    tracing::info!(agent = %agent.name, cwd = %agent.cwd.display(), policy = ?agent.policy, "starting worker");
    let handle = WorkerHandle::spawn(agent.clone(), config.settings.clone(), host.clone());
    workers
        .borrow_mut()
        .running
        .insert(agent.name.clone(), (agent, handle));
}

/// Applies a new configuration: removed agents stop, added ones start, changed ones restart
/// with their new settings; the others are not touched. Changed daemon-wide settings restart
/// every worker.
async fn apply(
    workers: &Rc<RefCell<Workers>>,
    host: &Rc<dyn Host>,
    old: &WorkersConfig,
    new: &WorkersConfig,
) {
    for note in &new.notes {
        tracing::warn!("{note}");
    }
    let changes = config::diff(old, new);
    let mut restart: Vec<AgentName> = changes.changed.clone();
    if config::settings_changed(old, new) || !new.settings.enabled {
        restart = workers.borrow().running.keys().cloned().collect();
    }
    tracing::info!(
        added = changes.added.len(),
        removed = changes.removed.len(),
        changed = restart.len(),
        "configuration reloaded"
    );
    let stopping: Vec<AgentName> = changes.removed.iter().chain(restart.iter()).cloned().collect();
    let mut handles = Vec::new();
    for name in &stopping {
        if let Some((_, handle)) = workers.borrow_mut().running.remove(name) {
            tracing::info!(agent = %name, "stopping worker");
            handles.push(handle);
        }
    }
    futures::future::join_all(handles.into_iter().map(WorkerHandle::stop)).await;
    let wanted: Vec<AgentConfig> = new
        .enabled_agents()
        .filter(|a| !workers.borrow().running.contains_key(&a.name))
        .cloned()
        .collect();
    for agent in wanted {
        start(workers, host, agent, new);
    }
}
