//! The worker's mailbox: unread mail, the reply written as the worker, and the mark that a
//! message was handled, on either backend. Every call blocks (file I/O under Claude's lock, or
//! `atm` runs), so each runs on the blocking pool; only the poll's count is an async child.
//!
//! Replies are idempotent on the files backend: `send_with_id` writes a reply's fixed id once,
//! and the sender's inbox tells whether it was written. `atm send` (ATM 1.6) takes no message
//! id, so on the `atm-cli` backend the worker's own ledger (`ledger.rs`) records each reply the
//! moment `atm send` returns; only a crash between those two calls can answer a message twice.

use std::path::PathBuf;
use std::sync::Arc;

use acplb_atm::atm_cli::AtmCli;
use acplb_atm::{MailBackend, MailEnvelope, MailStore, ReadOptions, ReadReceipt};
use ulid::Ulid;

use super::WorkerError;
use super::ledger::Ledger;

/// At most this many messages are read at once; the rest wait for the next wake-up.
const READ_BATCH: usize = 64;
/// Longest message text handed to the agent (the `atm_read` default).
const MAX_MESSAGE_CHARS: usize = 16_384;

/// One worker's mailbox, on the backend its `atm-mail` plugin uses, as the same identity. The
/// host resolves it once per run ([`Started::mail`](crate::Started)).
#[derive(Debug, Clone)]
pub enum Mailbox {
    /// Claude Code's inbox files (`<ATM_HOME|HOME>/.claude/teams/<team>/inboxes/<name>.json`):
    /// the inbox folder is watched, and the worker's activity is shown in the team's
    /// `config.json`.
    Files(Arc<MailStore>),
    /// The `atm` CLI of ATM ≥ 1.2 (mail in ATM's daemon): the unread count is polled, and the
    /// replies sent through it are kept in the worker's reply ledger.
    AtmCli(Arc<AtmCli>),
}

impl Mailbox {
    /// Inbox files.
    pub fn files(store: MailStore) -> Self {
        Self::Files(Arc::new(store))
    }

    /// The `atm` CLI.
    pub fn atm_cli(cli: AtmCli) -> Self {
        Self::AtmCli(Arc::new(cli))
    }

    fn backend(&self) -> Arc<dyn MailBackend> {
        match self {
            Self::Files(store) => store.clone(),
            Self::AtmCli(cli) => cli.clone(),
        }
    }

    /// The folder holding the worker's inbox (watched for new mail); `None` on `atm-cli`.
    pub(crate) fn inbox_dir(&self) -> Option<PathBuf> {
        match self {
            Self::Files(store) => store.own_inbox().parent().map(std::path::Path::to_path_buf),
            Self::AtmCli(..) => None,
        }
    }

    /// The folder of `team` (its `config.json` shows who is active); `None` on `atm-cli`.
    pub(crate) fn team_dir(&self, team: &str) -> Option<PathBuf> {
        match self {
            Self::Files(store) => Some(store.team_dir(team)),
            Self::AtmCli(..) => None,
        }
    }

    /// Unread mail, oldest first, and the receipt that marks it read.
    pub(crate) async fn unread(&self) -> Result<(Vec<MailEnvelope>, ReadReceipt), WorkerError> {
        let backend = self.backend();
        blocking(move || {
            let opts = ReadOptions {
                max_messages: READ_BATCH,
                max_message_length: MAX_MESSAGE_CHARS,
                include_system: false,
            };
            backend
                .read(&opts)
                .map(|b| (b.messages, b.receipt))
                .map_err(|e| mail_failed("reading the inbox", &e))
        })
        .await
    }

    /// Whether the reply with `id` is already in `to`'s inbox. On `atm-cli`, which cannot
    /// tell, whether `ledger` recorded it (see the module's note).
    pub(crate) async fn replied(&self, ledger: &Ledger, to: &str, id: Ulid) -> Result<bool, WorkerError> {
        match self {
            Self::Files(store) => {
                let (store, to) = (store.clone(), to.to_owned());
                blocking(move || {
                    store
                        .has_message(&to, id)
                        .map_err(|e| mail_failed("looking for an earlier reply", &e))
                })
                .await
            }
            Self::AtmCli(_) => {
                let ledger = ledger.clone();
                blocking(move || ledger.contains(id)).await
            }
        }
    }

    /// Writes the reply: idempotent on files (the same `id` is never written twice); on
    /// `atm-cli` ATM gives the reply an id of its own and `id` goes into `ledger`.
    pub(crate) async fn reply(
        &self,
        ledger: &Ledger,
        to: &str,
        text: String,
        summary: String,
        id: Ulid,
    ) -> Result<(), WorkerError> {
        let to = to.to_owned();
        match self {
            Self::Files(store) => {
                let store = store.clone();
                blocking(move || {
                    store
                        .send_with_id(&to, &text, Some(&summary), id)
                        .map(|_| ())
                        .map_err(|e| mail_failed("writing the reply", &e))
                })
                .await
            }
            Self::AtmCli(cli) => {
                let (cli, ledger) = (cli.clone(), ledger.clone());
                let sent = blocking(move || {
                    let sent = cli
                        .send(&to, &text, Some(&summary))
                        .map_err(|e| mail_failed("sending the reply through atm", &e))?;
                    // Right away: a crash after this line is known to have answered.
                    ledger.record(id)?;
                    Ok(sent)
                })
                .await?;
                tracing::debug!(reply = %id, atm_id = %sent.message_id, "reply sent through atm");
                Ok(())
            }
        }
    }

    /// The team's members as the backend knows them (`config.json` on files, `atm members` on
    /// `atm-cli`); `None` when the team keeps no roster.
    pub(crate) async fn members(&self) -> Result<Option<Vec<String>>, WorkerError> {
        let backend = self.backend();
        blocking(move || {
            backend
                .members()
                .map_err(|e| mail_failed("reading the team's roster", &e))
        })
        .await
    }

    /// Marks the messages of `receipt` read.
    pub(crate) async fn mark_read(&self, receipt: ReadReceipt) -> Result<(), WorkerError> {
        let backend = self.backend();
        blocking(move || {
            backend
                .commit(&receipt)
                .map(|_| ())
                .map_err(|e| mail_failed("marking mail read", &e))
        })
        .await
    }
}

fn mail_failed(action: &'static str, e: &dyn std::fmt::Display) -> WorkerError {
    WorkerError::Mail {
        action,
        message: e.to_string(),
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, WorkerError> + Send + 'static,
) -> Result<T, WorkerError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        Err(WorkerError::Blocking {
            what: "the mail task",
            reason: e.to_string(),
        })
    })
}

/// The id of `worker`'s reply to `incoming`: the same every time, so a worker that answers a
/// message again after a crash finds its earlier reply (and the sender never gets two). Its
/// time part is the incoming message's, its random part a hash of worker and message id.
pub(crate) fn reply_id(worker: &str, incoming: &MailEnvelope) -> Ulid {
    let ms = acplb_atm::time::parse_nanos(&incoming.timestamp)
        .and_then(|n| u64::try_from(n / 1_000_000).ok())
        .unwrap_or(0);
    let key = format!("{worker}\n{}", incoming.message_id);
    let high = u128::from(fnv1a(key.as_bytes(), 0xcbf2_9ce4_8422_2325));
    let low = u128::from(fnv1a(key.as_bytes(), 0x8422_2325_cbf2_9ce4));
    Ulid::from_parts(ms, (high << 64) | low)
}

fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    bytes.iter().fold(seed, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(id: &str) -> MailEnvelope {
        MailEnvelope {
            from: "alice".into(),
            message: "hi".into(),
            timestamp: "2026-11-23T04:00:00.000Z".into(),
            message_id: id.into(),
        }
    }

    #[test]
    fn a_reply_id_is_stable_and_differs_per_message_and_worker() {
        let a = reply_id("bob@t", &envelope("m1"));
        assert_eq!(a, reply_id("bob@t", &envelope("m1")));
        assert_ne!(a, reply_id("bob@t", &envelope("m2")));
        assert_ne!(a, reply_id("carol@t", &envelope("m1")));
        assert_eq!(a.timestamp_ms(), 1_795_406_400_000, "2026-11-23T04:00:00Z");
    }
}
