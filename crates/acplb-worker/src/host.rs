//! What the daemon needs from the binary that runs it: a server per worker (its provider and
//! plugins) and the worker's mail backend. The binary wires Codex; tests can wire stand-ins.

use std::path::Path;

use std::rc::Rc;

use acplb_atm::MailStore;
use acplb_atm::atm_cli::AtmCli;
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::Server;

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

/// The binary's side of the daemon.
pub trait Host {
    /// A new server for `agent`: its own provider (its own Codex children) and a plugin
    /// pipeline that claims exactly the agent's identity and gives it the team-mail tools.
    /// Called at every (re)start of the worker. The provider is returned beside the server
    /// for health checks (`ProviderAdapter::health`): is the worker's Codex alive and answering?
    fn server(&self, agent: &AgentConfig) -> Result<(Server, Rc<dyn ProviderAdapter>), String>;

    /// The mail backend of `agent` (its inbox, and replies sent as it): the one its own
    /// composer file gives `atm-mail` (`backend = "files"`, the default, or `"atm-cli"`).
    fn mail(&self, agent: &AgentConfig) -> Result<WorkerMail, String>;

    /// acplb's state directory (sessions, queues, the control socket).
    fn state_dir(&self) -> &Path;
}
