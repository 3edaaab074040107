//! acplb-worker: Codex teammates that answer their team mail on their own (`acplb worker`).
//!
//! Each enabled agent of `workers.toml` is an acplb session with that agent's team identity,
//! driven by the daemon instead of an editor (ADR 0014).
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod daemon;
pub mod host;
pub mod logs;
pub mod status;
pub mod worker;

pub use host::{Host, Started};
pub use status::{DaemonStatus, WorkerState, WorkerStatus};
pub use worker::Mailbox;
