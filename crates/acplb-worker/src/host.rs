//! What the daemon needs from the binary that runs it: per run of a worker, a server (its
//! provider and plugins) and the worker's mail backend. The binary wires Codex; tests wire a
//! scripted provider.

use std::path::Path;
use std::rc::Rc;

use acplb_atm::MailStore;
use acplb_atm::atm_cli::AtmCli;
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::Server;
use futures::future::LocalBoxFuture;

use crate::config::AgentConfig;

/// Where a worker's mail lives: the backend its `atm-mail` plugin uses, as the same identity.
#[derive(Debug)]
pub enum WorkerMail {
    /// Claude Code's inbox files (`<ATM_HOME|HOME>/.claude/teams/<team>/inboxes/<name>.json`):
    /// the inbox folder is watched, and the worker's activity is shown in the team's
    /// `config.json`.
    Files(MailStore),
    /// The `atm` CLI of ATM ≥ 1.2 (mail in ATM's daemon): the unread count is polled.
    AtmCli(AtmCli),
}

/// What one run of a worker works with.
#[derive(Debug)]
pub struct Started {
    /// A new server for the agent: its own provider (its own Codex children) and a plugin
    /// pipeline that claims exactly the agent's identity and gives it the team-mail tools.
    pub server: Server,
    /// The server's provider, for health checks (`ProviderAdapter::health`): is the worker's
    /// Codex alive and answering?
    pub provider: Rc<dyn ProviderAdapter>,
    /// The mail backend of the agent (its inbox, and replies sent as it): the one its
    /// plugins use.
    pub mail: WorkerMail,
}

/// The binary's side of the daemon.
pub trait Host {
    /// What the next run of `agent` works with; called at every (re)start of the worker.
    /// Whatever may block (the worker's composer file written and read) runs off the runtime
    /// thread.
    fn start<'a>(&'a self, agent: &'a AgentConfig) -> LocalBoxFuture<'a, Result<Started, String>>;

    /// acplb's state directory (sessions, queues, the control socket).
    fn state_dir(&self) -> &Path;
}
