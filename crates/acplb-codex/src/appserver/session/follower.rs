//! A session's task between turns: what the router sends it (the news of the commands and the
//! subagents its turns left working) becomes updates the session actor sends, and what those
//! subagents ask is put to the editor through the actor, each answer given to Codex when it
//! comes (ADR 0058, 0059).

use agent_client_protocol::v1::schema::SessionUpdate;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::super::rpc::{Incoming, Rpc};
use super::super::subagents::{NotAsked, Subagents};
use super::background::{Editor, Parked, Shared};

/// What the follower needs: the session's views of what its turns left working, its server, and
/// the ways to the session actor.
pub(crate) struct Follower {
    pub(crate) background: Shared,
    pub(crate) parked: Parked,
    pub(crate) rpc: std::rc::Weak<Rpc>,
    pub(crate) updates: mpsc::UnboundedSender<SessionUpdate>,
    pub(crate) editor: Editor,
}

/// Starts the follower on what the router sends it (`idle`). Ends when either side is dropped.
pub(crate) fn follow(follower: Follower, mut idle: mpsc::Receiver<Incoming>) -> JoinHandle<()> {
    tokio::task::spawn_local(async move {
        loop {
            let mut out = Vec::new();
            tokio::select! {
                // Cancel-safe: a message not taken stays in the channel.
                msg = idle.recv() => match msg {
                    Some(msg) => follower.take(msg, &mut out),
                    None => return,
                },
                // Cancel-safe: an answer not taken stays with its question (`asked.rs`).
                () = follower.answered(&mut out) => {}
                // Cancel-safe: a view kept again (by a turn that ended) is waited on now.
                () = follower.parked.kept() => {}
            }
            for update in out {
                if follower.updates.send(update).is_err() {
                    return;
                }
            }
        }
    })
}

impl Follower {
    /// Takes one message of the router's, what to show of it going to `out`.
    fn take(&self, msg: Incoming, out: &mut Vec<SessionUpdate>) {
        match msg {
            // Codex went between turns, and the subagents still working with it (what they
            // asked goes unanswered: nobody waits for it now).
            Incoming::Gone(gone) => {
                if let Some(view) = self.parked.borrow_mut().as_mut() {
                    let why = match gone.unanswered {
                        Some(_) => "Codex stopped answering, and this subagent with it.",
                        None => "Codex exited, and this subagent with it.",
                    };
                    view.close_open(why, out);
                    drop(view.withdraw_all());
                }
            }
            Incoming::Notification { method, params } => {
                // A child's error words are cleared of secrets first, as in a turn (its server
                // gone, nothing of it is shown).
                let redacted = self
                    .rpc
                    .upgrade()
                    .map(|rpc| super::turn::redact_error(&rpc, &method, &params));
                let child = self.parked.borrow_mut().as_mut().is_some_and(|s| {
                    s.is_child(&params)
                        && redacted
                            .as_ref()
                            .is_some_and(|r| s.take(&method, r.as_ref().unwrap_or(&params), out))
                });
                if !child {
                    self.background.borrow_mut().take(&method, &params, out);
                }
            }
            Incoming::Request { id, method, params } => {
                if let Some(rpc) = self.rpc.upgrade() {
                    let mut parked = self.parked.borrow_mut();
                    ask_or_refuse(parked.as_mut(), &id, &method, &params, &self.editor, &rpc, out);
                }
            }
        }
    }

    /// Resolves when the editor answered a question of a child's between turns: Codex hears
    /// the answer, the child shows it runs again (to `out`). Pending while none is open.
    async fn answered(&self, out: &mut Vec<SessionUpdate>) {
        let (open, answer) = std::future::poll_fn(|cx| {
            let mut parked = self.parked.borrow_mut();
            match parked.as_mut() {
                Some(view) => view.poll_answered(cx, out),
                None => std::task::Poll::Pending,
            }
        })
        .await;
        if let Some(rpc) = self.rpc.upgrade() {
            rpc.respond(&open.id, open.ask.result(&answer));
        }
    }
}

/// Puts Codex's request `id` between turns to the editor when it is a question of one of
/// `view`'s children (its updates to `out`); else Codex is told no, with why.
pub(crate) fn ask_or_refuse(
    view: Option<&mut Subagents>,
    id: &Value,
    method: &str,
    params: &Value,
    editor: &Editor,
    rpc: &Rpc,
    out: &mut Vec<SessionUpdate>,
) {
    let asked = match view {
        Some(view) => view.ask_between(id, method, params, editor, out),
        None => Err(NotAsked::NotOurs),
    };
    if let Err(why) = asked {
        tracing::debug!(%method, ?why, "codex app-server asked something between turns; declined");
        rpc.respond_error(id, -32603, refusal(why));
    }
}

/// What Codex is told of a request between turns acplb does not put to the editor.
pub(crate) fn refusal(why: NotAsked) -> &'static str {
    match why {
        NotAsked::NotOurs | NotAsked::NoEditor => "no turn of this session is running",
        NotAsked::TooMany => "too many questions wait for the editor already",
    }
}

/// Answers "cancel" to what `view`'s children asked between turns and still wait on (the view
/// is let go: its session closes, or its turn does not keep it).
pub(crate) fn withdraw_all(view: &mut Subagents, rpc: &Rpc) {
    for open in view.withdraw_all() {
        rpc.respond(&open.id, open.ask.cancelled());
    }
}

#[cfg(test)]
#[path = "follower_tests.rs"]
pub(crate) mod tests;
