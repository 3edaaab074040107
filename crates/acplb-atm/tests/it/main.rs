//! Integration tests of acplb-atm: interop with real ATM and Claude files, at-least-once reads,
//! concurrent writers, identity claims and the `atm` CLI backend.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test helpers panic on setup failure"
)]

mod atm_cli;
mod concurrency;
mod hostile;
mod identity;
mod interop;
mod mcp;
mod reading;
mod util;
