//! The mail backend seam: what sending and at-least-once reading look like to callers.

use crate::error::MailError;
pub use crate::record::MailEnvelope;

/// A message that was delivered (or already present) in one inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The recipient as `agent@team`.
    pub recipient: String,
    /// The message id (a ULID).
    pub message_id: String,
    /// `true` when a record with this id was already in the inbox, so nothing was written.
    pub already_present: bool,
}

/// Limits of one read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// At most this many messages (oldest first).
    pub max_messages: usize,
    /// Each message's text is cut to this many characters, with a visible marker.
    pub max_message_length: usize,
    /// Also return Claude system traffic (idle notices, shutdown requests, ...).
    pub include_system: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            max_messages: 10,
            max_message_length: 4096,
            include_system: false,
        }
    }
}

/// What a read returned: the envelopes, and the receipt that marks them read once committed.
#[derive(Debug, Clone)]
pub struct ReadBatch {
    /// The unread messages, oldest first.
    pub messages: Vec<MailEnvelope>,
    /// Commit this after the messages have been written out to the agent.
    pub receipt: ReadReceipt,
    /// Unread messages left beyond `max_messages`.
    pub remaining: usize,
}

/// Proof of delivery to commit: the keys of the messages a read returned.
///
/// Until it is committed the messages stay unread, so a crash between reading and delivering
/// makes the next read return them again (at-least-once).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "messages stay unread until the receipt is committed"]
pub struct ReadReceipt {
    mailbox: String,
    keys: Vec<String>,
}

impl ReadReceipt {
    pub(crate) fn new(mailbox: String, keys: Vec<String>) -> Self {
        Self { mailbox, keys }
    }

    /// The mailbox (inbox path or `atm:` address) this receipt belongs to.
    pub fn mailbox(&self) -> &str {
        &self.mailbox
    }

    /// The ids of the messages it covers.
    pub fn message_ids(&self) -> &[String] {
        &self.keys
    }

    /// The part of this receipt that covers only `message_id` (empty when it does not cover
    /// it), to mark one message read once it has been handled.
    pub fn only(&self, message_id: &str) -> ReadReceipt {
        ReadReceipt {
            mailbox: self.mailbox.clone(),
            keys: self.keys.iter().filter(|k| *k == message_id).cloned().collect(),
        }
    }

    /// Whether it covers no message (committing it does nothing).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub(crate) fn check_mailbox(&self, expected: &str) -> Result<(), MailError> {
        if self.mailbox == expected {
            Ok(())
        } else {
            Err(MailError::ForeignReceipt {
                receipt: self.mailbox.clone(),
                store: expected.to_owned(),
            })
        }
    }
}

/// The outcome of a broadcast: one send per team member except the sender.
#[derive(Debug, Default)]
pub struct BroadcastReport {
    /// Recipients that got the message, each with its own id.
    pub sent: Vec<SentMessage>,
    /// Recipients that did not, with why.
    pub failed: Vec<(String, MailError)>,
}

/// A mailbox for one fixed identity. Sending never takes a sender: it is the backend's identity.
///
/// Calls block (file locks, child processes); async callers use `spawn_blocking`.
pub trait MailBackend: Send + Sync {
    /// Sends `message` to `to` (`agent` or `agent@team`), with `summary` or an automatic one.
    fn send(&self, to: &str, message: &str, summary: Option<&str>) -> Result<SentMessage, MailError>;
    /// Returns unread mail without marking it; commit the receipt after delivery.
    fn read(&self, opts: &ReadOptions) -> Result<ReadBatch, MailError>;
    /// Marks the messages of `receipt` read; returns how many were marked.
    fn commit(&self, receipt: &ReadReceipt) -> Result<usize, MailError>;
    /// Counts unread, non-system messages without changing anything.
    fn pending_count(&self) -> Result<usize, MailError>;
    /// Sends `message` to every team member except the sender, each with its own id.
    fn broadcast(&self, message: &str, summary: Option<&str>) -> Result<BroadcastReport, MailError>;
    /// The names of the backend's team's members; `None` when the team keeps no roster (a
    /// team folder without `config.json` members), so membership cannot be told.
    fn members(&self) -> Result<Option<Vec<String>>, MailError>;
}
