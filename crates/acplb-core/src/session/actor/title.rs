//! A title the client set (`session/set_title`, `/rename`): shown to the editor as a
//! `session_info_update`, recorded in the journal and the registry like any update
//! (`sink.rs`), and kept from being replaced by the first prompt's line.

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionInfoUpdate, SessionUpdate};

use super::SessionActor;

impl SessionActor {
    pub(super) fn set_title(
        &mut self,
        title: String,
        said: bool,
        answer: tokio::sync::oneshot::Sender<Option<String>>,
    ) {
        self.titled = Some(title.clone());
        if said {
            let text = format!("Session renamed to “{title}”.");
            self.notify(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::from(text),
            )));
        }
        self.notify(SessionUpdate::SessionInfoUpdate(
            SessionInfoUpdate::new().title(title),
        ));
        tracing::info!(session = %self.id, "title set");
        if answer.send(self.thread_id()).is_err() {
            tracing::debug!(session = %self.id, "the title's requester is gone");
        }
    }
}

impl SessionActor {
    /// The provider's id of this conversation: from the journal, else the provider (or what it
    /// said last, while it runs a turn).
    pub(super) fn thread_id(&self) -> Option<String> {
        self.journal
            .as_ref()
            .and_then(|j| j.thread_id())
            .or_else(|| self.provider.as_ref().and_then(|p| p.thread_id()))
            .or_else(|| self.thread.clone())
    }
}
