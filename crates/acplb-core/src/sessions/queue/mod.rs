//! The input queue: any process drops a message for a session or a worker into a folder, and
//! the consumer of that folder claims, delivers and deletes it (ADR 0013).
//!
//! ```text
//! <state>/queue/<target>/            0700; target: a session id or a worker identity name@team
//! <state>/queue/<target>/.tmp-<uuid> a message being written (ignored by consumers)
//! <state>/queue/<target>/<uuid>.json a message waiting (0600)
//! <state>/queue/<target>/<uuid>.claimed  a message a consumer is delivering
//! <state>/queue/<target>/<uuid>.bad  a damaged file, set aside for a person to look at
//! ```
//!
//! A message file is `{"id", "from", "text", "sentAt"}` ([`Message`]); [`send`] writes one
//! atomically (temporary name, fsync, rename), [`Queue`] consumes them.
//!
//! # Guarantees
//! - **Never twice at the same time.** A claim is the rename `<uuid>.json` → `<uuid>.claimed`,
//!   which exactly one of any number of racing consumers (threads or processes) wins.
//! - **At least once.** A claimed message is deleted only by [`Claimed::done`], after its
//!   delivery; a failed delivery [`Claimed::release`]s it. A consumer that died between claim
//!   and `done` leaves its claim behind, and [`Queue::recover_stale`] puts it back: the message
//!   is then delivered again, possibly a second time if the dead consumer had delivered it.
//!   Recovery must only take claims older than the longest delivery.
//! - **A damaged file is set aside**, never retried and never a panic: one that is not a
//!   message, and anything named like one that is not a regular file (a directory, a FIFO, a
//!   symlink). No open blocks (`O_NONBLOCK`) or follows a link (`O_NOFOLLOW`), and a file one
//!   consumer cannot claim (its permissions, say) does not keep it from the others.
//!
//! Everything here except [`QueueWatcher`] is blocking file I/O: callers on the runtime thread
//! go through `spawn_blocking`.

mod claimed;
mod consume;
mod envelope;
mod error;
mod message;
mod read;
mod send;
mod target;
mod watch;

pub use claimed::Claimed;
pub use consume::Queue;
pub use envelope::{envelope, escape_attribute};
pub use error::QueueError;
pub use message::{BadMessageId, MAX_FROM_BYTES, MAX_TEXT_BYTES, Message, MessageId, check_text};
pub use send::send;
pub use target::{MAX_IDENTITY_BYTES, check_target, queue_dir, queues_dir};
pub use watch::{POLL, QueueWatcher, TICK, Wake};

#[cfg(test)]
mod tests;
