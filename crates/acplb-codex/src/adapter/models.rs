//! The models a session offers: what Codex's `model/list` says (ADR 0025). A session opens at
//! once with the list Codex gave last (before any, the catalog compiled in) and Codex is asked
//! again behind it: on app-server the shared server (the first ask is the one that starts it),
//! on exec a `codex app-server` of its own, started for the question and stopped after it. A
//! list that differs from what the open sessions offer reaches each of them as a
//! `config_option_update`. A Codex that cannot be asked (it fails, answers garbage, or takes
//! longer than [`WAIT`]) leaves what was offered, and a warning in the log.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use acplb_core::error::ProviderError;
use acplb_core::provider::{ProviderSession, SessionSink, TurnOutcome, TurnRequest};
use acplb_core::session::modes::ProviderModes;
use acplb_core::session::options::OptionCatalog;
use agent_client_protocol::v1::schema::AvailableCommand;
use async_trait::async_trait;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::appserver::{self, AppServer};
use crate::catalog;
use crate::options::CodexOptions;

/// How long one ask waits for Codex's list (a cold server's start included).
const WAIT: Duration = Duration::from_secs(10);

/// The list Codex gave last, and what to offer before it gave one.
#[derive(Debug, Clone)]
pub(super) struct LiveModels {
    inner: Rc<Inner>,
}

#[derive(Debug)]
struct Inner {
    options: CodexOptions,
    /// The compiled-in catalog, with the transport's traits (asks, steers).
    fallback: OptionCatalog,
    /// What sessions offer: Codex's last list, else `fallback`. Open sessions watch it.
    offered: watch::Sender<OptionCatalog>,
    /// Whether Codex gave a list yet.
    listed: Cell<bool>,
    /// Whether an ask is under way (a session opening meanwhile starts none).
    asking: Cell<bool>,
}

impl LiveModels {
    pub(super) fn new(options: CodexOptions, fallback: OptionCatalog) -> Self {
        let (offered, _) = watch::channel(fallback.clone());
        Self {
            inner: Rc::new(Inner {
                options,
                fallback,
                offered,
                listed: Cell::new(false),
                asking: Cell::new(false),
            }),
        }
    }

    /// What a session offers now: the last list Codex gave, else the fallback.
    pub(super) fn current(&self) -> OptionCatalog {
        self.inner.offered.borrow().clone()
    }

    /// What a session opening now offers, and the newer lists it will be told of.
    pub(super) fn offer(&self) -> (OptionCatalog, watch::Receiver<OptionCatalog>) {
        let updates = self.inner.offered.subscribe();
        let now = updates.borrow().clone();
        (now, updates)
    }

    /// Asks Codex again (`server`, else a `codex app-server` of its own), behind the caller:
    /// what it says reaches every open session. One ask at a time.
    pub(super) fn refresh(&self, server: Option<AppServer>) {
        let inner = &self.inner;
        if !inner.options.list_models || inner.asking.replace(true) {
            return;
        }
        let inner = Rc::clone(inner);
        tokio::task::spawn_local(async move {
            inner.ask(server).await;
            inner.asking.set(false);
        });
    }
}

impl Inner {
    async fn ask(&self, server: Option<AppServer>) {
        let overrides = self.options.overrides.clone();
        // Codex's config file is read off the runtime thread, while Codex is asked.
        let configured = tokio::task::spawn_blocking(move || catalog::configured(&overrides));
        let asked = if let Some(server) = server {
            tokio::time::timeout(WAIT, appserver::models::list(&server)).await
        } else {
            let own = AppServer::new(CodexOptions {
                transcript_dir: None,
                ..self.options.clone()
            });
            let asked = tokio::time::timeout(WAIT, appserver::models::list(&own)).await;
            own.shutdown().await;
            asked
        };
        let listed = match asked {
            Ok(Ok(listed)) => listed,
            Ok(Err(why)) => return self.keep(&why),
            Err(_) => return self.keep(&format!("codex did not list its models within {WAIT:?}")),
        };
        let configured = configured.await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reading Codex's configured model failed");
            None
        });
        let live = catalog::from_list(&self.fallback, &listed, configured);
        tracing::debug!(models = live.models.len(), "codex listed its models");
        self.listed.set(true);
        self.offered.send_if_modified(|offered| {
            let changed = *offered != live;
            *offered = live;
            changed
        });
    }

    /// Codex gave no list: sessions go on offering what they offer.
    fn keep(&self, why: &str) {
        let kept = if self.listed.get() {
            "the list it gave last"
        } else {
            "the models acplb knows of Codex 0.169.0"
        };
        tracing::warn!("{why}; the model option offers {kept}");
    }
}

/// A provider session with the models it offers.
pub(super) struct Offering {
    pub(super) session: Box<dyn ProviderSession>,
    pub(super) catalog: OptionCatalog,
    /// Newer lists, until the session takes them.
    pub(super) updates: Option<watch::Receiver<OptionCatalog>>,
    /// The session's permission profiles as modes, as Codex lists them (`profiles.rs`).
    pub(super) profiles: Option<watch::Receiver<ProviderModes>>,
    /// The session's skills and custom prompts as slash commands.
    pub(super) commands: super::commands::SessionCommands,
    /// `/hooks`.
    pub(super) hooks: super::hooks::HooksCommand,
}

#[async_trait(?Send)]
impl ProviderSession for Offering {
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
        if let Some(done) = self.hooks.answer(&turn.prompt.text, sink, &cancel).await {
            return Ok(done);
        }
        let mut turn = turn;
        self.commands.prepare(&mut turn).await?;
        self.session.run_turn(turn, sink, cancel).await
    }

    async fn shutdown(&mut self) {
        self.session.shutdown().await;
    }

    fn thread_id(&self) -> Option<String> {
        self.session.thread_id()
    }

    fn catalog(&self) -> Option<OptionCatalog> {
        Some(self.catalog.clone())
    }

    fn catalog_updates(&mut self) -> Option<watch::Receiver<OptionCatalog>> {
        self.updates.take()
    }

    fn mode_updates(&self) -> Option<watch::Receiver<ProviderModes>> {
        self.profiles.clone()
    }

    fn command_updates(&mut self) -> Option<watch::Receiver<Vec<AvailableCommand>>> {
        self.commands.updates()
    }

    fn background_updates(
        &mut self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<agent_client_protocol::v1::schema::SessionUpdate>> {
        self.session.background_updates()
    }

    fn background_asks(
        &mut self,
    ) -> Option<tokio::sync::mpsc::UnboundedReceiver<acplb_core::provider::BackgroundAsk>> {
        self.session.background_asks()
    }

    fn announce_again(&self) -> Vec<agent_client_protocol::v1::schema::SessionUpdate> {
        self.session.announce_again()
    }
}
