//! The provider's questions outside its turns (`ProviderSession::background_asks`, ADR 0059):
//! each put to the editor beside whatever runs, its answer sent back to the provider.

use super::SessionActor;
use crate::provider::SessionSink as _;

impl SessionActor {
    /// Puts the provider's question to the editor beside whatever runs (a turn, or nothing),
    /// once what came before it reached the editor (a load's replay over, the client reading);
    /// the answer goes back when it comes, or nowhere if the provider stopped waiting. One the
    /// provider withdrew meanwhile is not asked.
    pub(super) fn ask_beside(&self, asked: crate::provider::BackgroundAsk) {
        let sink = self.sink();
        tokio::task::spawn_local(async move {
            sink.ready().await;
            if asked.answer.is_closed() {
                tracing::debug!("a question the provider withdrew before it was asked; not asked");
                return;
            }
            let answer = sink.request_permission(asked.ask).await;
            if asked.answer.send(answer).is_err() {
                tracing::debug!("the editor answered a question the provider no longer waits on");
            }
        });
    }
}
