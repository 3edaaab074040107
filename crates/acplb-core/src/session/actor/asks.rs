//! The provider's questions outside its turns (`ProviderSession::background_asks`, ADR 0059):
//! each put to the editor beside whatever runs, its answer sent back to the provider.

use super::SessionActor;
use crate::provider::SessionSink as _;

impl SessionActor {
    /// Puts the provider's question to the editor beside whatever runs (a turn, or nothing),
    /// once what came before it reached the editor (a load's replay over, the client reading);
    /// the answer goes back when it comes. One the provider withdraws (it stops waiting) before
    /// it is asked is not asked; one it withdraws while the editor shows it is withdrawn there
    /// too: the request is dropped, which sends the editor `$/cancel_request` for it.
    pub(super) fn ask_beside(&self, asked: crate::provider::BackgroundAsk) {
        let sink = self.sink();
        let crate::provider::BackgroundAsk {
            ask,
            answer: mut reply,
        } = asked;
        tokio::task::spawn_local(async move {
            // Put once what came before reached the editor; dropped (never put, or withdrawn
            // from the editor) as soon as the provider stops waiting.
            let put = async {
                sink.ready().await;
                sink.request_permission(ask).await
            };
            let answer = tokio::select! {
                biased;
                () = reply.closed() => {
                    tracing::debug!("a question the provider withdrew; not asked, or withdrawn from the editor");
                    return;
                }
                answer = put => answer,
            };
            if reply.send(answer).is_err() {
                tracing::debug!("the editor answered a question the provider no longer waits on");
            }
        });
    }
}
