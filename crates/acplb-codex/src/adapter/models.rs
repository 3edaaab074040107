//! The models a session offers: what Codex's `model/list` says, asked when a session opens
//! (ADR 0025). On app-server the shared server is asked (the first session's ask is the one
//! that starts it); on exec a `codex app-server` of its own is started for the question and
//! stopped after it. A Codex that cannot be asked (it fails, answers garbage, or takes longer
//! than [`WAIT`]) leaves the last list it gave, else the catalog compiled in, and a warning in
//! the log: a session opens either way.

use std::cell::RefCell;
use std::time::Duration;

use acplb_core::error::ProviderError;
use acplb_core::provider::{ProviderSession, SessionSink, TurnOutcome, TurnRequest};
use acplb_core::session::options::OptionCatalog;
use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::appserver::{self, AppServer};
use crate::catalog;
use crate::options::CodexOptions;

/// How long a session's opening waits for Codex's list (a cold server's start included).
const WAIT: Duration = Duration::from_secs(10);

/// The list Codex gave last, and what to offer when it gave none.
#[derive(Debug)]
pub(super) struct LiveModels {
    options: CodexOptions,
    /// The compiled-in catalog, with the transport's traits (asks, steers).
    fallback: OptionCatalog,
    last: RefCell<Option<OptionCatalog>>,
}

impl LiveModels {
    pub(super) fn new(options: CodexOptions, fallback: OptionCatalog) -> Self {
        Self {
            options,
            fallback,
            last: RefCell::new(None),
        }
    }

    /// What a session offers now: the last list Codex gave, else the fallback.
    pub(super) fn current(&self) -> OptionCatalog {
        self.last
            .borrow()
            .clone()
            .unwrap_or_else(|| self.fallback.clone())
    }

    /// Asks Codex again (`server`, else a `codex app-server` of its own) and offers what it says.
    pub(super) async fn refresh(&self, server: Option<&AppServer>) -> OptionCatalog {
        if !self.options.list_models {
            return self.current();
        }
        let overrides = self.options.overrides.clone();
        // Codex's config file is read off the runtime thread, while Codex is asked.
        let configured = tokio::task::spawn_blocking(move || catalog::configured(&overrides));
        let asked = if let Some(server) = server {
            tokio::time::timeout(WAIT, appserver::models::list(server)).await
        } else {
            let own = AppServer::new(CodexOptions {
                transcript_dir: None,
                ..self.options.clone()
            });
            let asked = tokio::time::timeout(WAIT, appserver::models::list(&own)).await;
            // Stopped behind the answer, so the session does not wait for it.
            tokio::task::spawn_local(async move { own.shutdown().await });
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
        *self.last.borrow_mut() = Some(live.clone());
        live
    }

    /// Codex gave no list: what it gave last, else the compiled-in catalog.
    fn keep(&self, why: &str) -> OptionCatalog {
        let kept = if self.last.borrow().is_some() {
            "the list it gave last"
        } else {
            "the models acplb knows of Codex 0.169.0"
        };
        tracing::warn!("{why}; the model option offers {kept}");
        self.current()
    }
}

/// A provider session with the models it offers.
pub(super) struct Offering {
    pub(super) session: Box<dyn ProviderSession>,
    pub(super) catalog: OptionCatalog,
}

#[async_trait(?Send)]
impl ProviderSession for Offering {
    async fn run_turn(
        &mut self,
        turn: TurnRequest,
        sink: &dyn SessionSink,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ProviderError> {
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
}
