//! acplb-atm: the agent-team side of acplb — identity, a Claude-compatible team mail store, the
//! session context, the audit log, and the `atm` tools.
//!
//! The mail store speaks Claude Code's agent-teams file protocol (`teams/<team>/inboxes/<a>.json`
//! under Claude's `mkdir` lock); [`atm_cli::AtmCli`] drives the `atm` CLI for ATM ≥ 1.2, whose
//! mail lives in its daemon. Both implement [`MailBackend`].
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod activity;
pub mod atm_cli;
pub mod audit;
pub mod context;
pub mod env;
pub mod error;
pub mod identity;
mod inbox;
pub mod mail;
pub mod mcp;
pub mod names;
pub mod plugins;
mod proc;
pub mod record;
/// Secret redaction (moved to `acplb-core`, shared with transcripts and recordings).
pub use acplb_core::redact;
pub mod store;
pub mod text;
pub mod time;

pub use env::{EnvSource, ProcessEnv};
pub use error::MailError;
pub use inbox::lock::LockPolicy;
pub use mail::{
    BroadcastReport, MailBackend, MailEnvelope, ReadBatch, ReadOptions, ReadReceipt, SentMessage,
};
pub use store::MailStore;
