//! Vendor requests the runtime does not answer itself (`_codex/hooks/list`,
//! `_session/async_task/stop`, …: methods other agents' clients send, `JetBrains` AIR first),
//! handed to the provider with the open session they name, if any (ADR 0046).

use std::path::PathBuf;

/// The open session a vendor request names (its `sessionId`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorSession {
    /// The ACP session id.
    pub id: String,
    /// The provider's own id of its conversation, once it has one (Codex's thread id).
    pub thread_id: Option<String>,
    /// The session's working directory.
    pub cwd: PathBuf,
}

/// Why the provider did not answer a vendor request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VendorFailure {
    /// The provider knows no such method: the client is told the method does not exist.
    #[error("unknown method `{0}`")]
    NotMine(String),
    /// The method exists but its params are wrong; the text says how.
    #[error("{0}")]
    InvalidParams(String),
    /// The request was understood but could not be done; the text says why.
    #[error("{0}")]
    Failed(String),
}
