//! The client side of an in-process ACP connection to this crate's [`Server`](crate::runtime::Server):
//! a process that drives acplb sessions itself (the worker daemon, ADR 0014; the MCP server,
//! ADR 0023) is the "editor" of its own server, so its sessions are ordinary acplb sessions —
//! journaled, listed, loadable in an editor — and the runtime needs no second way in.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Channel;
use agent_client_protocol::v1::schema::{ContentBlock, SessionId, SessionNotification, SessionUpdate};

/// The text of each running turn, by session id: the agent's message chunks since its last
/// tool call (its final answer), filled by the client's notification handler.
#[derive(Debug, Clone, Default)]
pub struct Answers(Arc<Mutex<HashMap<String, Answer>>>);

#[derive(Debug, Default)]
struct Answer {
    text: String,
    /// A tool call came after the text so far: the next chunk starts a new message.
    stale: bool,
}

impl Answers {
    /// A turn of `session` starts: its answer so far is empty.
    pub fn start(&self, session: &SessionId) {
        self.lock().insert(session.to_string(), Answer::default());
    }

    /// The turn of `session` ended: its answer, forgotten here.
    pub fn take(&self, session: &SessionId) -> String {
        self.lock()
            .remove(&session.to_string())
            .map(|a| a.text)
            .unwrap_or_default()
    }

    /// The answer of the running turn of `session` so far, kept.
    pub fn peek(&self, session: &SessionId) -> String {
        self.lock()
            .get(&session.to_string())
            .map(|a| a.text.clone())
            .unwrap_or_default()
    }

    /// Takes one `session/update`.
    pub fn on_update(&self, n: &SessionNotification) {
        let mut map = self.lock();
        let Some(answer) = map.get_mut(&n.session_id.to_string()) else {
            // A replay (`session/load`) or a notice outside a turn.
            return;
        };
        match &n.update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = &chunk.content {
                    if answer.stale {
                        answer.text.clear();
                        answer.stale = false;
                    }
                    answer.text.push_str(&t.text);
                }
            }
            SessionUpdate::ToolCall(_) => answer.stale = !answer.text.is_empty(),
            _ => {}
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Answer>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The two ends of an in-process connection: `(server's end, client's end)`. When the client
/// side is gone, what the server still writes is dropped (as by a pipe nobody reads) instead of
/// refused. Call it on a `LocalSet`: the forwarding task is local.
pub fn duplex() -> (Channel, Channel) {
    use futures::StreamExt as _;
    let (agent_end, client_side) = Channel::duplex();
    let (mut from_agent, to_agent) = client_side.into_parts();
    let (to_client, client_rx) = futures::channel::mpsc::unbounded();
    tokio::task::spawn_local(async move {
        while let Some(frame) = from_agent.next().await {
            if to_client.unbounded_send(frame).is_err() {
                // The client side has hung up: the frame is dropped.
            }
        }
    });
    (agent_end, Channel::new(client_rx, to_agent))
}
