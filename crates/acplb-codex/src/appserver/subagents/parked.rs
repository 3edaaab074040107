//! Children that outlive their parent's turn, for a client that takes ACP's subagent sessions:
//! as the TS peer does, acplb goes on showing them. The session keeps the turn's view when the
//! turn ends with such a child working ("parked"); between turns the router hands the
//! children's news to the session's follower, which feeds it to the view, and the next turn
//! of the same thread takes the view up again. No turn runs to carry a cancel between turns,
//! so a parked child offers none until the next turn offers it again. What a parked child asks
//! between turns is put to the editor through the session actor (`asked.rs`).

use agent_client_protocol::v1::schema::SessionUpdate;

use super::Subagents;
use super::child::{Child, is_open};
use crate::appserver::decode::DecoderOptions;

impl Subagents {
    /// Whether children that outlive the parent's turn go on being shown (ACP's shape).
    pub(super) fn follows_between_turns(&self) -> bool {
        self.sessions_of.is_some() && !self.waits
    }

    /// Whether the session should keep this view after the turn: a child shown as a session
    /// works on.
    pub(crate) fn parks(&self) -> bool {
        self.follows_between_turns()
            && self
                .children
                .iter()
                .any(|c| c.session.is_some() && is_open(c.status))
    }

    /// The parent's turn ended with these children working: they go on, shown running, with
    /// nothing the editor may cancel until a turn of the parent's runs again (said once).
    pub(crate) fn park(&mut self, out: &mut Vec<SessionUpdate>) {
        self.parked = true;
        // What they asked in the turn is answered at its end ("cancel"): only what they ask
        // between turns is open.
        for at in 0..self.children.len() {
            self.children[at].open_asks = self.open_between(&self.children[at].thread_id);
        }
        for child in self
            .children
            .iter_mut()
            .filter(|c| is_open(c.status) && !c.parked)
        {
            child.parked = true;
            show_state(child, out);
        }
    }

    /// The thread whose children these are.
    pub(crate) fn parent(&self) -> &str {
        &self.parent
    }

    /// Taken up by the parent's next turn, whose ids start as `options` say: the children still
    /// working are offered for cancel again; the ended ones are remembered only.
    pub(crate) fn next_turn(&mut self, options: DecoderOptions, out: &mut Vec<SessionUpdate>) {
        self.known = self.announced();
        self.children.retain(|c| c.session.is_some() && is_open(c.status));
        self.options = options;
        self.parked = false;
        for child in &mut self.children {
            child.parked = false;
            child.due = false;
            show_state(child, out);
        }
    }
}

/// The child's session state, and, when what it asked is still open (`asked.rs`), that it
/// still waits for the editor.
fn show_state(child: &Child, out: &mut Vec<SessionUpdate>) {
    out.extend(child.session_state());
    if let Some(session) = child.session.as_deref().filter(|_| child.open_asks > 0) {
        out.push(super::sessions::requires_action(session));
    }
}
