//! acplb-worker: Codex teammates that answer their team mail on their own (`acplb worker`).
//!
//! Each enabled agent of `workers.toml` is an acplb session with that agent's team identity,
//! driven by the daemon instead of an editor.
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod logs;
