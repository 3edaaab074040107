//! Where a question for Codex's app-server goes: the shared server on the app-server
//! transport; on exec, a `codex app-server` of its own, started for the question and stopped
//! behind the answer (Codex's threads and config are the same files either way).

use crate::appserver::AppServer;
use crate::options::CodexOptions;

#[derive(Debug, Clone)]
pub(super) enum OnServer {
    Shared(AppServer),
    Own(Box<CodexOptions>),
}

impl OnServer {
    pub(super) fn new(shared: Option<&AppServer>, options: &CodexOptions) -> Self {
        match shared {
            Some(server) => OnServer::Shared(server.clone()),
            None => OnServer::Own(Box::new(options.clone())),
        }
    }

    /// Runs `ask` on the server.
    pub(super) async fn ask<T>(&self, ask: impl AsyncFnOnce(&AppServer) -> T) -> T {
        let options = match self {
            OnServer::Shared(server) => return ask(server).await,
            OnServer::Own(options) => options,
        };
        let own = AppServer::new(CodexOptions {
            transcript_dir: None,
            ..(**options).clone()
        });
        let answer = ask(&own).await;
        tokio::task::spawn_local(async move { own.shutdown().await });
        answer
    }
}
