//! What the editor sends into a running turn, read by the provider beside its child's output:
//! prompts steered into it, and cancels of its subagent sessions (ADR 0056).

use std::rc::Rc;

use tokio::sync::mpsc::UnboundedReceiver;

use super::PromptInput;

/// What the editor sends into a running turn: prompts ([`super::WhileBusy::Steer`]), which the
/// provider reads beside its child's output, and cancels of the turn's subagent sessions (ADR
/// 0056), each naming the child's session. Empty for providers that take neither.
#[derive(Debug, Clone, Default)]
pub struct SteerInbox {
    prompts: Option<Rc<tokio::sync::Mutex<UnboundedReceiver<PromptInput>>>>,
    child_cancels: Option<Rc<tokio::sync::Mutex<UnboundedReceiver<String>>>>,
}

impl SteerInbox {
    /// An inbox reading prompts from `rx`.
    pub fn new(rx: UnboundedReceiver<PromptInput>) -> Self {
        Self {
            prompts: Some(Rc::new(tokio::sync::Mutex::new(rx))),
            child_cancels: None,
        }
    }

    /// The same inbox, reading cancels of the turn's subagent sessions from `rx`.
    #[must_use]
    pub fn with_child_cancels(mut self, rx: UnboundedReceiver<String>) -> Self {
        self.child_cancels = Some(Rc::new(tokio::sync::Mutex::new(rx)));
        self
    }

    /// The next steered prompt; pending forever when there is none (cancel-safe).
    pub async fn next(&self) -> PromptInput {
        if let Some(rx) = &self.prompts
            && let Some(input) = rx.lock().await.recv().await
        {
            return input;
        }
        std::future::pending().await
    }

    /// The session of the next subagent the editor cancelled; pending forever when there is
    /// none (cancel-safe).
    pub async fn next_child_cancel(&self) -> String {
        if let Some(rx) = &self.child_cancels
            && let Some(child) = rx.lock().await.recv().await
        {
            return child;
        }
        std::future::pending().await
    }

    /// Takes no more prompts: the turn is over, though its answer waits for something else. A
    /// prompt sent after this is not steered; it waits for a turn of its own.
    pub fn close(&self) {
        if let Some(rx) = &self.prompts
            && let Ok(mut rx) = rx.try_lock()
        {
            rx.close();
        }
    }
}

#[cfg(test)]
#[path = "steer_tests.rs"]
mod tests;
