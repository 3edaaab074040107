//! The journal of a session: an append-only JSONL file of what the editor sent and was sent,
//! written as it happens (`writer.rs`), read back (`history.rs`), shown again for `session/load`
//! (`replay.rs`), as text (`render.rs`), followed live as text (`follow.rs`), and digested for a
//! conversation that must start over (`digest.rs`).

mod digest;
mod follow;
mod history;
mod record;
mod render;
mod replay;
mod writer;

pub use digest::{digest, fork_digest};
pub use follow::{FOLLOW_POLL, Follower, follow};
pub use history::{Facts, History, JournalError, first_text_line, parse, read};
pub use record::{FORMAT, Record, now};
pub use render::{Renderer, render};
pub use replay::{INTERRUPTED, repair, updates};
pub use writer::{DEFAULT_LIMIT, Journal};

#[cfg(test)]
mod tests;
