//! The daemon's host in the binary: each worker gets its own Codex provider (its own
//! app-server, so one worker's crash is not another's) and its own composer file, written
//! and read on the blocking pool once per run.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use acplb_atm::MailStore;
use acplb_atm::atm_cli::AtmCli;
use acplb_codex::{CodexAdapter, CodexOptions, Transport};
use acplb_core::plugin::ComposerPipelines;
use acplb_core::plugin::composer::{ComposerConfig, Source};
use acplb_core::provider::ProviderAdapter;
use acplb_core::runtime::{Durability, Server, ServerOptions};
use acplb_worker::config::AgentConfig;
use acplb_worker::{Mailbox, Started};
use futures::future::LocalBoxFuture;

/// What every worker's server shares.
pub(super) struct CodexHost {
    pub(super) state: PathBuf,
    pub(super) codex: PathBuf,
    pub(super) overrides: Vec<String>,
    pub(super) transport: Transport,
    pub(super) turn_timeout: Option<Duration>,
    pub(super) shutdown_grace: Duration,
    pub(super) durability: Durability,
}

impl acplb_worker::Host for CodexHost {
    fn start<'a>(&'a self, agent: &'a AgentConfig) -> LocalBoxFuture<'a, Result<Started, String>> {
        Box::pin(async move {
            let (state, owned) = (self.state.clone(), agent.clone());
            let (composer, mail) = tokio::task::spawn_blocking(move || prepare(&state, &owned))
                .await
                .map_err(|e| format!("preparing the worker stopped: {e}"))??;
            let pipelines = ComposerPipelines::with_explicit(crate::pipelines::plugins(), composer, None)
                .with_state_dir(Some(self.state.clone()));
            let (server, provider) = self.server(agent, pipelines)?;
            Ok(Started {
                server,
                provider,
                mail,
            })
        })
    }

    fn state_dir(&self) -> &Path {
        &self.state
    }
}

impl CodexHost {
    /// The worker's server and its own Codex provider.
    fn server(
        &self,
        agent: &AgentConfig,
        pipelines: ComposerPipelines,
    ) -> Result<(Server, Rc<dyn ProviderAdapter>), String> {
        let transport = match &agent.transport {
            Some(t) => t.parse::<Transport>()?,
            None => self.transport,
        };
        let mut options = CodexOptions::new(self.codex.clone());
        options.overrides.clone_from(&self.overrides);
        options.mcp_launcher = crate::serve::mcp_launcher();
        let catalog = acplb_codex::catalog(&self.overrides);
        let provider: Rc<dyn ProviderAdapter> = Rc::new(CodexAdapter::new(options, transport, catalog));
        let server = Server::new(
            provider.clone(),
            Arc::new(pipelines),
            ServerOptions {
                agent_name: "acplb-worker".into(),
                agent_version: env!("CARGO_PKG_VERSION").into(),
                shutdown_grace: self.shutdown_grace,
                output_flow: acplb_core::transport::OutputFlow::default(),
                turn_timeout: self.turn_timeout,
                durability: Some(self.durability.clone()),
            },
        );
        Ok((server, provider))
    }
}

/// Everything of a worker's start that touches files (on the blocking pool): its composer
/// file written, then read back and validated as its plugins (with a registry of its own: a
/// registry stays on its thread); its mail backend.
fn prepare(state: &Path, agent: &AgentConfig) -> Result<(ComposerConfig, Mailbox), String> {
    let prepared = super::composer::prepare(state, agent).map_err(|e| format!("{e:#}"))?;
    let composer =
        acplb_core::plugin::composer::load(Source::Flag(prepared.composer), &crate::pipelines::plugins())
            .map_err(|e| format!("the worker's plugins: {e}"))?;
    let spec = prepared.mail;
    let (name, team) = (agent.name.name(), agent.name.team());
    if spec.atm_cli {
        // `atm` on PATH, as the `atm-mail` plugin and its MCP server run it.
        let cli = AtmCli::new(name, team);
        let cli = match spec.atm_home {
            Some(home) => cli.with_env("ATM_HOME", home),
            None => cli,
        };
        return Ok((composer, Mailbox::atm_cli(cli)));
    }
    let store = match spec.atm_home {
        Some(home) => MailStore::new(home.join(".claude"), name, team),
        None => MailStore::from_env(&acplb_atm::ProcessEnv, name, team),
    };
    let mail = store.map(Mailbox::files).map_err(|e| e.to_string())?;
    Ok((composer, mail))
}
