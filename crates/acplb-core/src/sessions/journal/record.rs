//! What a journal line holds: one JSON object per line, tagged by `t`.
//!
//! Written as things happen (the user's prompt as sent, every `session/update` acplb sent after
//! the plugin pipeline, mode and option changes, the provider's thread id, turn boundaries), so
//! a session can be shown again exactly as the editor saw it.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{ContentBlock, SessionConfigOptionValue, SessionUpdate};
use serde::{Deserialize, Serialize};

/// The journal format; a newer one is refused with a clear error rather than misread.
pub const FORMAT: u32 = 1;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Record {
    /// The first line: which session, where, since when.
    Open {
        /// The journal format ([`FORMAT`]).
        format: u32,
        /// The ACP session id.
        session_id: String,
        /// The session's working directory.
        cwd: PathBuf,
        /// When the session started (RFC 3339).
        at: String,
        /// The keys of `session/new`'s `_meta` that its provider keeps with the session
        /// ([`crate::provider::ProviderAdapter::kept_meta`]), given back to it on a load or
        /// resume by another process.
        #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
        meta: serde_json::Map<String, serde_json::Value>,
    },
    /// The session was loaded or resumed by a later acplb process.
    Reopened {
        /// When (RFC 3339).
        at: String,
    },
    /// A prompt as the editor sent it; `turn` is the turn it started or (steered) joined.
    Prompt {
        /// The turn number (1-based).
        turn: u64,
        /// When it was taken (RFC 3339).
        at: String,
        /// The content blocks as sent.
        prompt: Vec<ContentBlock>,
        /// Sent into a running turn rather than starting one.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        steered: bool,
    },
    /// One `session/update` as the editor got it.
    Update {
        /// The update.
        u: Box<SessionUpdate>,
    },
    /// A turn ended.
    TurnEnd {
        /// The turn number.
        turn: u64,
        /// When (RFC 3339).
        at: String,
        /// How: an ACP stop reason (`end_turn`, `cancelled`, ...), `error`, `refused`,
        /// `timeout` or `interrupted` (acplb stopped before the turn ended).
        stop: String,
        /// The error the prompt was answered with, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The provider's id of the conversation (Codex thread id), when it is first known or changes.
    Thread {
        /// The id.
        id: String,
    },
    /// The session mode changed.
    Mode {
        /// The mode id.
        id: String,
    },
    /// A config option changed.
    Setting {
        /// The option id.
        id: String,
        /// Its new value.
        value: SessionConfigOptionValue,
    },
    /// Updates were left out from here on: the journal reached its size limit.
    Gap {
        /// The limit, in bytes.
        limit: u64,
    },
    /// Records that could not be written (a full disk, say) or were too large were left out
    /// here. Written once writing works again; an older acplb skips it as damaged.
    Lost {
        /// How many records.
        count: u64,
        /// Why (the first error).
        error: String,
        /// When writing worked again (RFC 3339).
        at: String,
    },
}

/// The borrowed form written on the hot path (no clone of the update).
#[derive(Serialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub(super) enum RecordRef<'a> {
    Update { u: &'a SessionUpdate },
}

/// Now, as RFC 3339 UTC with milliseconds (sorts as a string).
pub fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
