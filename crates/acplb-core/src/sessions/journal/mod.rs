//! The journal of a session: an append-only JSONL file of what the editor sent and was sent,
//! written as it happens (`writer.rs`, with what a write that fails does in `loss.rs`), read
//! back a line at a time (`history.rs`, `lines.rs`), shown again for `session/load`
//! (`replay.rs`), as text (`render.rs`), followed live as text (`follow.rs`), and digested for a
//! conversation that must start over (`digest.rs`).

mod as_text;
mod digest;
mod follow;
mod history;
mod lines;
mod loss;
mod markdown_plan;
mod record;
mod render;
mod replay;
mod writer;

pub use digest::{digest, fork_digest};
pub use follow::{FOLLOW_POLL, Follower, follow};
pub use history::{Facts, History, JournalError, first_text_line, parse, read, read_in};
pub use lines::MAX_LINE;
pub use loss::{JournalNews, Listener};
pub use markdown_plan::plans_for;
pub use record::{FORMAT, Record, now};
pub use render::{Renderer, render};
pub(crate) use replay::warning;
pub use replay::{INTERRUPTED, repair, updates, without_compaction};
pub use writer::{DEFAULT_LIMIT, Journal};

#[cfg(test)]
mod tests;
