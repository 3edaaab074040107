//! What becomes a worker's work: its unread mail (from members, or refused and marked read),
//! its claimed input-queue messages, and putting back what was still waiting when it stops.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use acplb_core::sessions::queue::Queue;

use super::Ctx;
use super::mail::{Mailbox, reply_id};
use super::sender::{self, Gate};
use super::work::{self, Work};
use crate::config::Policy;

/// Unread mail into `pending` (what is not already there or running); mail from a sender who
/// is not a team member is marked read instead (unless the agent accepts it), and with
/// `reject`, mail that finds the worker busy is answered "busy" at once.
pub(super) async fn take_mail(
    ctx: &Ctx,
    mailbox: &Mailbox,
    pending: &mut VecDeque<Work>,
    known: &mut HashSet<String>,
    busy: bool,
) {
    let (messages, receipt) = match mailbox.unread().await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the inbox");
            return;
        }
    };
    let mut busy = busy || !pending.is_empty();
    let worker = ctx.agent.name.to_string();
    let mut gate = None;
    for mail in messages {
        let part = receipt.only(&mail.message_id);
        let key = format!("mail:{}", mail.message_id);
        if known.contains(&key) {
            continue;
        }
        let gate = match &mut gate {
            Some(gate) => gate,
            None => match Gate::of(&ctx.agent, mailbox).await {
                Ok(g) => gate.insert(g),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the team's roster; the mail waits");
                    return;
                }
            },
        };
        if let Some(why) = gate.refuses(&mail.from, ctx.agent.name.team()) {
            sender::refuse(mailbox, &mail, part, &why).await;
            continue;
        }
        // Answered before a crash, not yet marked read: the reply is there, so only mark it.
        if mailbox
            .replied(&ctx.ledger, &mail.from, reply_id(&worker, &mail))
            .await
            .unwrap_or(false)
        {
            tracing::info!(message = %mail.message_id, "already answered; marking it read");
            if let Err(e) = mailbox.mark_read(part).await {
                tracing::warn!(error = %e, "cannot mark an answered message read");
            }
            continue;
        }
        if ctx.agent.policy == Policy::Reject && busy {
            work::reject_busy(ctx, mailbox, &mail, part).await;
            continue;
        }
        busy = true;
        known.insert(key);
        pending.push_back(Work::Mail { mail, receipt: part });
    }
}

/// Every message waiting in the input queue, claimed, into `pending`.
pub(super) async fn take_queued(
    queue: &Arc<Mutex<Queue>>,
    pending: &mut VecDeque<Work>,
    known: &mut HashSet<String>,
) {
    let q = queue.clone();
    let claimed = tokio::task::spawn_blocking(move || {
        let mut q = q.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = Vec::new();
        loop {
            match q.claim_next() {
                Ok(Some(c)) => out.push(c),
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot claim from the input queue");
                    break;
                }
            }
        }
        out
    })
    .await
    .unwrap_or_default();
    for c in claimed {
        let work = Work::Queued(c);
        known.insert(work.key());
        pending.push_back(work);
    }
}

/// Puts back the queue messages still waiting (mail simply stays unread).
pub(super) async fn release_all(pending: VecDeque<Work>) {
    for work in pending {
        if let Work::Queued(c) = work {
            work::release(c).await;
        }
    }
}
