//! What the daemon needs from the binary that runs it: per run of a worker, a server (its
//! provider and plugins) and the worker's mail backend. The binary wires Codex; tests wire a
//! scripted provider.

use std::path::Path;
use std::rc::Rc;

use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::Server;
use futures::future::LocalBoxFuture;

use crate::config::AgentConfig;
use crate::worker::Mailbox;

/// What one run of a worker works with.
#[derive(Debug)]
pub struct Started {
    /// A new server for the agent: its own provider (its own Codex children) and a plugin
    /// pipeline that claims exactly the agent's identity and gives it the team-mail tools.
    pub server: Server,
    /// The server's provider, for health checks (`ProviderAdapter::health`): is the worker's
    /// Codex alive and answering?
    pub provider: Rc<dyn ProviderAdapter>,
    /// The mailbox of the agent (its inbox, and replies sent as it), on the backend its
    /// plugins use.
    pub mail: Mailbox,
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
