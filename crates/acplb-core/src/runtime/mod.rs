//! The ACP server: handlers that forward every request to a single-threaded runtime loop,
//! which owns the session store and one actor per session.

mod asked;
mod auth;
mod auth_updates;
mod batch_get;
mod close;
mod delete;
mod durable;
mod fork;
mod goal;
mod handlers;
mod initialize;
mod list_watch;
mod modes;
mod open;
mod opened;
mod reattach;
mod refuse;
mod routing;
mod shelf;
mod start;
mod store;
mod title;
mod unclaimed;
mod vendor;

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::{Agent, ConnectTo};

pub use delete::{NOT_FOUND, THREAD_KEPT};
pub use durable::Durability;
pub use fork::FORK_OF;
pub use shelf::THREAD_UNCHANGED;
pub(crate) use title::rename_command;
pub use title::{THREAD_NOT_RENAMED, TITLE_LIMIT};

use crate::plugin::PipelineSource;
use crate::provider::ProviderAdapter;

/// How long acplb waits, past the shutdown's grace, for the session registry to have what its
/// sessions told it on disk (a slow disk: each registry write is synced). Past it, the last
/// changes are lost and said so.
const REGISTRY_WAIT: Duration = Duration::from_secs(3);

/// What the server tells editors about itself and offers per session.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `agentInfo.name`.
    pub agent_name: String,
    /// `agentInfo.version`.
    pub agent_version: String,
    /// How long shutdown may take before children are abandoned to their kill-on-drop.
    pub shutdown_grace: Duration,
    /// The client's backpressure (from `transport::stdio::Wire`); the default never waits.
    pub output_flow: crate::transport::OutputFlow,
    /// The longest one turn may run before it is stopped and answered with a timeout error
    /// (`None`: no limit).
    pub turn_timeout: Option<Duration>,
    /// Where sessions are kept so they outlive the process (`session/load`, `list`,
    /// `resume`); `None`: they are not.
    pub durability: Option<Durability>,
}

/// The runtime: an ACP connection plus the session actors, all on the current `LocalSet`.
#[derive(Debug)]
pub struct Server {
    provider: Rc<dyn ProviderAdapter>,
    pipelines: Arc<dyn PipelineSource>,
    options: ServerOptions,
}

impl std::fmt::Debug for dyn PipelineSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PipelineSource")
    }
}

impl std::fmt::Debug for dyn ProviderAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderAdapter")
    }
}

impl Server {
    /// A server for `provider` whose sessions get their plugins from `pipelines`.
    pub fn new(
        provider: Rc<dyn ProviderAdapter>,
        pipelines: Arc<dyn PipelineSource>,
        options: ServerOptions,
    ) -> Self {
        Self {
            provider,
            pipelines,
            options,
        }
    }

    /// Serves ACP on `transport` until the client hangs up or `shutdown` resolves, then stops
    /// every session (killing and reaping provider processes) and returns.
    ///
    /// Must run inside a `tokio::task::LocalSet`.
    pub async fn serve(
        self,
        transport: impl ConnectTo<Agent> + 'static,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), agent_client_protocol::Error> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let grace = self.options.shutdown_grace;
        let registry = self.options.durability.as_ref().and_then(|d| d.registry.clone());
        let store = store::Store::new(self.provider, self.pipelines, self.options.clone());
        let summarising = store.summarising();
        let mut runtime = tokio::task::spawn_local(store.run(rx));
        let result = tokio::select! {
            r = handlers::serve(tx, &self.options, transport) => {
                tracing::info!("client connection closed");
                r
            }
            () = shutdown => {
                tracing::info!("shutdown requested");
                Ok(())
            }
        };
        // The handlers (and their senders) are gone now; the store sees its channel close and
        // stops every session.
        let mut stopped = tokio::time::timeout(grace, &mut runtime).await.is_ok();
        if !stopped && summarising.get() {
            let limit = crate::plugin::summary::SUMMARY_LIMIT;
            stopped = tokio::time::timeout(limit, &mut runtime).await.is_ok();
        }
        if !stopped {
            tracing::warn!(?grace, "sessions did not stop in time; killing what is left");
        }
        // The grace is for processes; what the sessions that stopped told the registry (that
        // they are idle, closed, released) still lands, or the list would call them running.
        if let Some(writer) = registry
            && tokio::time::timeout(REGISTRY_WAIT, writer.flush()).await.is_err()
        {
            tracing::warn!(limit = ?REGISTRY_WAIT, "the session registry is still being written (a slow disk?); its last changes may be lost");
        }
        result
    }
}
