//! The Codex provider: which transport runs a session's turns (`codex app-server`, shared by
//! the sessions of one acplb, or one `codex exec` per turn) and what each offers the editor
//! (the models Codex lists: `models.rs`; Codex's skills and custom prompts as slash commands:
//! `commands.rs`).

pub(crate) mod auth;
mod commands;
mod hooks;
mod models;
mod on_server;
mod profiles;
mod vendor;

use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

use acplb_core::auth::{AuthFailure, SignInUi};
use acplb_core::error::ProviderError;
use acplb_core::provider::{ProviderAdapter, ProviderCapabilities, ProviderSession, SessionSetup};
use acplb_core::session::options::OptionCatalog;
use agent_client_protocol::v1::schema::{AuthMethod, ClientCapabilities};
use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::appserver::{self, AppServer};
use crate::exec;
use crate::options::CodexOptions;
use models::{LiveModels, Offering};
use on_server::OnServer;

/// How acplb talks to Codex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Transport {
    /// One long-lived `codex app-server` (JSON-RPC over stdio) for every session: live
    /// streaming, permission prompts, steering.
    #[default]
    AppServer,
    /// One `codex exec --json` per turn: output only when items complete, never asks.
    Exec,
}

impl Transport {
    /// The name used by `--transport` and `ACPLB_TRANSPORT`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::AppServer => "app-server",
            Transport::Exec => "exec",
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Transport {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "app-server" | "appserver" => Ok(Transport::AppServer),
            "exec" => Ok(Transport::Exec),
            other => Err(format!(
                "unknown transport `{other}`; it is one of: app-server, exec"
            )),
        }
    }
}

/// The Codex provider.
#[derive(Debug)]
pub struct CodexAdapter {
    options: CodexOptions,
    transport: Transport,
    capabilities: ProviderCapabilities,
    /// The shared `codex app-server`, started with the first session.
    server: Option<AppServer>,
    /// The models Codex lists, asked again (behind the answer) whenever a session opens.
    models: LiveModels,
    /// Signing in and out.
    auth: auth::Auth,
    /// Where the editor sends the model's traffic (`providers/*`), for sessions opened after.
    routing: crate::routing::CodexRouting,
}

impl CodexAdapter {
    /// A provider running Codex as `options` say, over `transport`, offering the models Codex
    /// lists, else `catalog`.
    pub fn new(options: CodexOptions, transport: Transport, catalog: OptionCatalog) -> Self {
        let (mut capabilities, server) = match transport {
            Transport::Exec => (exec::capabilities(catalog), None),
            Transport::AppServer => (
                appserver::capabilities(catalog),
                Some(AppServer::new(options.clone())),
            ),
        };
        capabilities.commands.push(hooks::command());
        Self {
            models: LiveModels::new(options.clone(), capabilities.catalog.clone()),
            auth: auth::Auth::new(options.clone()),
            routing: crate::routing::CodexRouting::default(),
            options,
            transport,
            capabilities,
            server,
        }
    }

    /// The transport sessions use.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Runs `ask` on the shared server; on exec, on a `codex app-server` of its own
    /// ([`OnServer`]).
    async fn on_a_server<T>(
        &self,
        ask: impl AsyncFnOnce(&AppServer) -> Result<T, ProviderError>,
    ) -> Result<T, ProviderError> {
        OnServer::new(self.server.as_ref(), &self.options).ask(ask).await
    }
}

#[async_trait(?Send)]
impl ProviderAdapter for CodexAdapter {
    fn capabilities(&self) -> ProviderCapabilities {
        ProviderCapabilities {
            catalog: self.models.current(),
            ..self.capabilities.clone()
        }
    }

    /// A caller's instructions, profile and config (`acplb mcp codex`'s `codex` tool) hold for
    /// the thread when another process continues it: the `acplb/codex` key, when it is one the
    /// provider accepts (so a refused value, one that could name a credential say, is never
    /// written down), and an AIR client's `jetbrains.air.customInstructions` (a string).
    fn kept_meta(&self, meta: &Map<String, Value>) -> Map<String, Value> {
        crate::caller::Caller::kept(meta)
    }

    async fn open_session(&self, setup: SessionSetup) -> Result<Box<dyn ProviderSession>, ProviderError> {
        // A client's `acplb/codex` `_meta` that cannot be applied fails `session/new` itself.
        let caller = crate::caller::Caller::of(&setup)?;
        let (cwd, picked) = (setup.cwd.clone(), crate::skills::Picked::default());
        let cwd_for_hooks = cwd.clone();
        let session = match &self.server {
            Some(server) => {
                // The app-server takes no `--profile` per thread: the profile's keys become
                // the thread's config overrides.
                let mut setup = setup;
                if caller.profile.is_some() {
                    caller.with_profile_file().await?.store(&mut setup.meta);
                }
                appserver::open_session(server, setup, Rc::clone(&picked), self.routing.current())
            }
            None => exec::open_session(&self.options, setup, self.routing.current()),
        };
        // Its permission profiles are asked for behind the opening (ADR 0038).
        let profiles = self
            .options
            .list_profiles
            .then(|| profiles::listing(self.server.as_ref(), &cwd));
        // Its skills are listed behind its thread's start (which the first prompt waits for).
        let lister = OnServer::new(self.server.as_ref(), &self.options);
        let commands = commands::SessionCommands::start(
            lister,
            cwd,
            self.capabilities.commands.clone(),
            self.options.list_skills.then_some(picked),
        );
        // The session offers what Codex listed last; Codex is asked again behind it.
        let (mut catalog, updates) = self.models.offer();
        self.models.refresh(self.server.clone());
        catalog.initial_mode.clone_from(&self.options.initial_mode);
        Ok(Box::new(Offering {
            session,
            catalog,
            updates: Some(updates),
            profiles,
            commands,
            hooks: hooks::HooksCommand::new(
                OnServer::new(self.server.as_ref(), &self.options),
                cwd_for_hooks,
            ),
        }))
    }

    async fn shutdown(&self) {
        if let Some(server) = &self.server {
            server.shutdown().await;
        }
    }

    /// `thread/delete` on the shared server; on exec, on a `codex app-server` of its own,
    /// stopped behind the answer (as the model list is asked).
    async fn delete_thread(&self, thread_id: &str) -> Result<(), ProviderError> {
        self.on_a_server(async |server| appserver::forget::delete_thread(server, thread_id).await)
            .await
    }

    /// `thread/name/set`, on a server as [`Self::delete_thread`] asks.
    async fn rename_thread(&self, thread_id: &str, title: &str) -> Result<(), ProviderError> {
        self.on_a_server(async |server| appserver::forget::rename_thread(server, thread_id, title).await)
            .await
    }

    /// `thread/archive` or `thread/unarchive`, on a server as [`Self::delete_thread`] asks.
    async fn archive_thread(&self, thread_id: &str, archived: bool) -> Result<(), ProviderError> {
        self.on_a_server(async |server| appserver::forget::archive_thread(server, thread_id, archived).await)
            .await
    }

    async fn health(&self) -> Result<(), String> {
        match &self.server {
            Some(server) => server.health().await,
            None => Ok(()),
        }
    }

    async fn vendor_request(
        &self,
        method: &str,
        params: &Value,
        session: Option<&acplb_core::provider::VendorSession>,
    ) -> Result<Value, acplb_core::provider::VendorFailure> {
        let on = OnServer::new(self.server.as_ref(), &self.options);
        vendor::answer(&on, self.server.as_ref(), method, params, session).await
    }

    fn routing(&self) -> Option<&dyn acplb_core::routing::ModelRouting> {
        Some(&self.routing)
    }

    fn auth_methods(&self, client: &ClientCapabilities) -> Vec<AuthMethod> {
        auth::methods(client)
    }

    async fn authenticate(
        &self,
        method: &str,
        meta: &Map<String, Value>,
        ui: &dyn SignInUi,
    ) -> Result<(), AuthFailure> {
        self.auth
            .authenticate(self.server.as_ref(), method, meta, ui)
            .await
    }

    async fn logout(&self) -> Result<(), AuthFailure> {
        self.auth.logout(self.server.as_ref()).await
    }

    fn auth_changes(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.server.as_ref().map(AppServer::account_changes)
    }

    async fn auth_status(
        &self,
    ) -> Result<agent_client_protocol::v1::schema::AuthStatusResponse, AuthFailure> {
        self.auth.status(self.server.as_ref()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_names_round_trip_and_unknown_says_what_there_is() {
        for t in [Transport::AppServer, Transport::Exec] {
            assert_eq!(t.name().parse::<Transport>(), Ok(t));
        }
        assert_eq!(Transport::default(), Transport::AppServer);
        let e = "grpc".parse::<Transport>().unwrap_err();
        assert_eq!(e, "unknown transport `grpc`; it is one of: app-server, exec");
    }
}
