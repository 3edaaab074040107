//! Messages from the session's input queue (ADR 0013), delivered when the session can take
//! them: steered into a running turn where the provider steers, else announced to the user and
//! kept for the next prompt, to which they are added. Always inside their envelope, never as
//! bare instructions; settled (`done`) only once delivered.

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Notice, NoticeSeverity, PromptRequest, SessionUpdate,
};

use super::SessionActor;
use super::inbox::{self, Inbox};
use crate::provider::PromptInput;
use crate::sessions::queue::{Claimed, Queue, QueueError, envelope};

impl SessionActor {
    /// Whether the editor shows `notice` updates (known for kept sessions, which have an inbox).
    pub(super) fn shows_notices(&self) -> bool {
        self.inbox.as_ref().is_some_and(|i| i.shows_notices)
    }

    /// The queue is open: deliver what waits.
    pub(super) fn on_queue_opened(&mut self, queue: Queue) {
        if let Some(inbox) = self.inbox.as_mut() {
            inbox.put(queue);
        }
        self.pull_queue();
    }

    /// Claims the next queued message when one could be delivered now: the session is idle,
    /// or its running turn can be steered. During a turn that cannot be steered (exec)
    /// messages wait in their files; the turn's end looks again.
    pub(super) fn pull_queue(&mut self) {
        if self.shutting_down || (self.running.is_some() && !self.can_steer()) {
            return;
        }
        if let Some(inbox) = self.inbox.as_mut() {
            inbox.claim();
        }
    }

    /// A claim came back: deliver it, then claim the next one, until the queue is empty.
    pub(super) fn on_queue_claimed(&mut self, queue: Queue, result: Result<Option<Claimed>, QueueError>) {
        let Some(inbox) = self.inbox.as_mut() else {
            return;
        };
        inbox.put(queue);
        match result {
            Ok(Some(claimed)) => {
                self.deliver(claimed);
                self.pull_queue();
            }
            Ok(None) => {
                if inbox.take_again() {
                    self.pull_queue();
                }
            }
            // The watcher's next wake-up (its tick at the latest) tries again.
            Err(e) => tracing::warn!(session = %self.id, "claiming a queued message failed: {e}"),
        }
    }

    /// Appends the envelopes of the messages held for it to the prompt that starts a turn.
    pub(super) fn add_held(&self, req: &mut PromptRequest) {
        let Some(inbox) = &self.inbox else { return };
        for claimed in &inbox.held {
            req.prompt.push(ContentBlock::from(envelope(claimed.message())));
        }
    }

    /// The turn that carries the held messages has started: they are delivered.
    pub(super) fn held_delivered(&mut self) {
        let Some(inbox) = self.inbox.as_mut() else { return };
        for claimed in inbox.held.drain(..) {
            tracing::info!(session = %self.id, id = %claimed.message().id, "queued message went with the prompt");
            inbox::delivered(claimed);
        }
    }

    /// Takes the inbox, to release what it holds when the session stops.
    pub(super) fn take_inbox(&mut self) -> Option<Inbox> {
        self.inbox.take()
    }

    /// Whether a turn runs that a queued message can be steered into.
    fn can_steer(&self) -> bool {
        self.catalog.steer && self.running.as_ref().is_some_and(|r| !r.cancel.is_cancelled())
    }

    fn deliver(&mut self, claimed: Claimed) {
        let message = claimed.message();
        let id = message.id;
        let from = message
            .from
            .clone()
            .unwrap_or_else(|| "an unknown sender".to_owned());
        let text = envelope(message);
        if self.shutting_down {
            // Dropped unsettled, it would be released on this thread; the close path does it.
            if let Some(inbox) = self.inbox.as_mut() {
                inbox.held.push(claimed);
            }
            return;
        }
        if self.can_steer()
            && let Some(running) = self.running.as_mut()
            && running
                .steer
                .send(PromptInput {
                    text: text.clone(),
                    images: Vec::new(),
                })
                .is_ok()
        {
            tracing::info!(session = %self.id, %id, "queued message steered into the running turn");
            let turn = self.turns;
            self.record(|j| j.prompt(turn, &[ContentBlock::from(text)], true));
            self.tell(&format!(
                "A queued message from {from} was sent into the running turn."
            ));
            inbox::delivered(claimed);
            return;
        }
        tracing::info!(session = %self.id, %id, "queued message held for the next prompt");
        self.tell(&format!(
            "A queued message from {from} arrived; it will go with your next prompt."
        ));
        if let Some(inbox) = self.inbox.as_mut() {
            inbox.held.push(claimed);
        }
    }

    /// An informational notice, or a line of agent text where the client shows no notices.
    fn tell(&self, text: &str) {
        let update = if self.shows_notices() {
            SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, text))
        } else {
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n\n"))))
        };
        self.notify(update);
    }
}
