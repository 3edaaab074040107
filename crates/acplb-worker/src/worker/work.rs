//! One piece of work for a worker: a team-mail message or a message from its input queue,
//! and what is done with it once its turn ends.

use acplb_atm::{MailEnvelope, ReadReceipt};
use acplb_core::sessions::queue::Claimed;

use super::link::TurnEnd;
use super::mail::{Mailbox, reply_id};
use super::{Ctx, WorkerError};
use crate::config::AgentConfig;

/// What a turn is for.
#[derive(Debug)]
pub(crate) enum Work {
    /// Team mail: the reply goes to its sender, then it is marked read.
    Mail {
        /// The message.
        mail: MailEnvelope,
        /// The receipt that marks only this message read.
        receipt: ReadReceipt,
    },
    /// A message from `acplb worker send` / `acplb queue send`: deleted once its turn ended.
    Queued(Claimed),
}

impl Work {
    /// The id that keeps one message from running twice at once.
    pub(crate) fn key(&self) -> String {
        match self {
            Self::Mail { mail, .. } => format!("mail:{}", mail.message_id),
            Self::Queued(c) => format!("queue:{}", c.message().id),
        }
    }

    /// The prompt, or why there is none (it would be longer than Codex accepts).
    pub(crate) fn prompt(&self, agent: &AgentConfig) -> Result<String, WorkerError> {
        let prompt = match self {
            Self::Mail { mail, .. } => super::prompt::for_mail(agent, mail),
            Self::Queued(c) => super::prompt::for_queued(agent, c.message()),
        };
        Ok(prompt?)
    }
}

/// What settling a turn did, for the status.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// A reply was written (or the queue message handled).
    Answered,
    /// Left for later (unread, or back in the queue).
    Kept,
}

/// Settles `work` after its turn ended with `end` (never `Crashed`: that keeps the message).
/// Mail: the reply (the answer, or what went wrong) is written first, then the message is
/// marked read — at least once: a crash in between answers again, and the reply's fixed id
/// keeps the sender from getting it twice.
pub(crate) async fn settle(ctx: &Ctx, mailbox: &Mailbox, work: Work, end: &TurnEnd) -> Settled {
    let agent = &ctx.agent;
    let text = match end {
        TurnEnd::Answered(answer) if answer.trim().is_empty() => {
            "(no answer: the turn ended without a message)".to_owned()
        }
        TurnEnd::Answered(answer) => answer.clone(),
        TurnEnd::Failed(why) => format!("I could not answer your message: {why}"),
        TurnEnd::Crashed(_) | TurnEnd::Cancelled => {
            if let Work::Queued(claimed) = work {
                release(claimed).await;
            }
            return Settled::Kept;
        }
    };
    match work {
        Work::Mail { mail, receipt } => {
            let worker = agent.name.to_string();
            let id = reply_id(&worker, &mail);
            let summary = format!(
                "Re: {} [{}]",
                acplb_atm::record::auto_summary(&mail.message),
                mail.message_id
            );
            if let Err(e) = mailbox.reply(&ctx.ledger, &mail.from, text, summary, id).await {
                // Unread again would answer it again and again; the reply is lost, loudly.
                tracing::error!(to = %mail.from, message = %mail.message_id, error = %e, "cannot write the reply");
            }
            if let Err(e) = mailbox.mark_read(receipt).await {
                tracing::error!(message = %mail.message_id, error = %e, "cannot mark the message read; it will be answered again");
                return Settled::Kept;
            }
            tracing::info!(to = %mail.from, message = %mail.message_id, reply = %id, "replied");
            Settled::Answered
        }
        Work::Queued(claimed) => {
            tracing::info!(message = %claimed.message().id, answer = %text, "queued message handled");
            let id = claimed.message().id;
            match tokio::task::spawn_blocking(move || claimed.done()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::warn!(%id, error = %e, "cannot delete the handled queue message"),
                Err(e) => tracing::warn!(%id, error = %e, "the queue task stopped"),
            }
            Settled::Answered
        }
    }
}

/// Puts a claimed queue message back for later.
pub(crate) async fn release(claimed: Claimed) {
    let id = claimed.message().id;
    match tokio::task::spawn_blocking(move || claimed.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(%id, error = %e, "cannot put the queue message back"),
        Err(e) => tracing::warn!(%id, error = %e, "the queue task stopped"),
    }
}

/// The immediate answer of a worker whose policy is `reject` and that is busy.
pub(crate) async fn reject_busy(ctx: &Ctx, mailbox: &Mailbox, mail: &MailEnvelope, receipt: ReadReceipt) {
    let agent = &ctx.agent;
    let id = reply_id(&agent.name.to_string(), mail);
    let text = format!(
        "{} is busy with another message and does not queue mail; please send it again later.",
        agent.name.name()
    );
    let summary = format!("Busy, try later [{}]", mail.message_id);
    if let Err(e) = mailbox.reply(&ctx.ledger, &mail.from, text, summary, id).await {
        tracing::error!(to = %mail.from, error = %e, "cannot write the busy reply");
    }
    if let Err(e) = mailbox.mark_read(receipt).await {
        tracing::error!(message = %mail.message_id, error = %e, "cannot mark the rejected message read");
    }
    tracing::info!(to = %mail.from, message = %mail.message_id, "rejected: busy");
}
