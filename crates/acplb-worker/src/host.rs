//! What the daemon needs from the binary that runs it: a server per worker (its provider and
//! plugins) and the worker's mail store. The binary wires Codex; tests can wire stand-ins.

use std::path::Path;

use std::rc::Rc;

use acplb_atm::MailStore;
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::Server;

use crate::config::AgentConfig;

/// The binary's side of the daemon.
pub trait Host {
    /// A new server for `agent`: its own provider (its own Codex children) and a plugin
    /// pipeline that claims exactly the agent's identity and gives it the team-mail tools.
    /// Called at every (re)start of the worker. The provider is returned beside the server
    /// for health checks (`ProviderAdapter::health`): is the worker's Codex alive and answering?
    fn server(&self, agent: &AgentConfig) -> Result<(Server, Rc<dyn ProviderAdapter>), String>;

    /// The mail store of `agent` (its inbox, and replies sent as it).
    fn mail(&self, agent: &AgentConfig) -> Result<MailStore, String>;

    /// acplb's state directory (sessions, queues, the control socket).
    fn state_dir(&self) -> &Path;
}
