//! End-to-end tests: the real `acplb` binary over real stdio with a real ACP client, and the
//! real Codex CLI against the project's mock model on 127.0.0.1.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::print_stdout
)]
#![allow(unreachable_pub, clippy::missing_panics_doc, missing_debug_implementations)]

mod cli;
mod codex;
mod harness;
mod lifecycle;
mod live;
mod protocol;
