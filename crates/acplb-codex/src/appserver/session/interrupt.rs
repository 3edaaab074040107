//! A cancelled turn's end: pending asks answered "cancel", `turn/interrupt`, the turn's last
//! updates awaited (briefly) so none is lost, its subagents and commands stopped, and an active
//! goal paused (`goal.rs`).

use std::time::Duration;

use super::turn::{Ended, PendingAsk, TurnRun, call};
use super::{Ask, FuturesUnordered, INTERRUPT_WAIT, Inbox, Incoming, SessionSink};
use crate::appserver::protocol::methods;
use crate::appserver::protocol::requests::TurnInterrupt;
use crate::appserver::subagents;
use crate::appserver::{mcp_form, user_input};
use acplb_core::provider::ElicitAnswer;

/// How long an interrupted turn has to say it ended before its open tool calls are closed
/// anyway: the prompt is answered within a second, whatever Codex does.
const INTERRUPT_CONFIRM: Duration = Duration::from_millis(500);

impl TurnRun<'_> {
    /// Cancel: pending asks are answered "cancel", the turn is interrupted, and its end awaited
    /// so its last updates are not lost: briefly ([`INTERRUPT_CONFIRM`]) before open tool calls
    /// close as cancelled and the editor hears it, then on (to [`INTERRUPT_WAIT`]) so that the
    /// sweep of the turn's commands finds what Codex stopped.
    pub(super) async fn interrupt(
        &mut self,
        inbox: &mut Inbox,
        sink: &dyn SessionSink,
        asks: FuturesUnordered<PendingAsk<'_>>,
    ) -> Ended {
        // The pending permission prompts are dropped (the editor cancels its own on
        // session/cancel); Codex hears "cancel" for each.
        drop(asks);
        self.stopping = true;
        self.next_turn_by = None;
        // A turn that ended and waits for its subagents has nothing left to interrupt.
        if self.held_end.take().is_some() {
            self.turn_id = None;
            self.children_by = None;
        }
        for (id, cancelled) in std::mem::take(&mut self.waiting) {
            self.respond(&id, cancelled);
        }
        for open in self.subagents.withdraw_all() {
            self.respond(&open.id, open.ask.cancelled());
        }
        if let Some(turn_id) = self.turn_id.clone() {
            let until = tokio::time::Instant::now() + INTERRUPT_WAIT;
            let params = TurnInterrupt {
                thread_id: self.thread_id.to_owned(),
                turn_id,
            };
            let rpc = self.rpc;
            let confirmed = async {
                // Not answered when Codex is frozen or deaf: then given up with this future.
                let _ignored = call(rpc, &mut self.transcript, &params).await;
                self.until_end(inbox, true).await;
            };
            if tokio::time::timeout(INTERRUPT_CONFIRM, confirmed).await.is_err() {
                self.close_open("Cancelled before it finished.", sink);
                if tokio::time::timeout_at(until, self.until_end(inbox, false))
                    .await
                    .is_err()
                {
                    tracing::warn!("codex did not confirm the interrupt in time");
                }
            }
        }
        subagents::stop(self.rpc, self.marker, self.subagents.threads()).await;
        // Codex leaves a running command running after an interrupt; it must not outlive the
        // cancel. Its processes carry the server's marker and the thread's id; the server and
        // other sessions' commands do not match both.
        let entry = format!("CODEX_THREAD_ID={}", self.thread_id);
        let killed = acplb_core::transport::kill_marked_with(self.marker.to_owned(), entry).await;
        if killed > 0 {
            tracing::debug!(killed, "stopped the cancelled turn's commands");
        }
        // Children still working were cancelled with their parent.
        self.subagents.turn_ended(true, &mut self.out);
        self.close_open("Cancelled before it finished.", sink);
        self.pause_goal().await;
        self.flush(sink);
        Ended::Cancelled
    }

    /// Reads the interrupted turn's messages until it says it ended (or the server is gone),
    /// refusing what Codex asks meanwhile; its updates are kept for the editor when `keep`.
    async fn until_end(&mut self, inbox: &mut Inbox, keep: bool) {
        while let Some(msg) = inbox.recv().await {
            self.record(&msg);
            let ended = match msg {
                Incoming::Notification { method, params } => self.on_notification(&method, &params).is_some(),
                Incoming::Request { id, method, params } => {
                    // Asked while stopping: refused the way a rejection would be.
                    match Ask::from_request(&method, &params, &self.decoder) {
                        Some(ask) => self.respond(&id, ask.cancelled()),
                        None if method == methods::TOOL_USER_INPUT => {
                            self.respond(&id, user_input::answers(&params, &ElicitAnswer::Cancelled));
                        }
                        None if method == methods::MCP_ELICITATION => {
                            self.respond(&id, mcp_form::cancelled());
                        }
                        None => self.respond_error(&id, -32603, "the turn was cancelled"),
                    }
                    false
                }
                Incoming::Gone(_) => true,
            };
            if !keep {
                self.out.clear();
            }
            if ended {
                return;
            }
        }
    }
}
