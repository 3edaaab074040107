//! The input queue across processes: consumers racing for the same files while a writer sends
//! lose no message and deliver none twice.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly and read top to bottom"
)]
#![allow(unreachable_pub, missing_debug_implementations)]

#[path = "../support/child_process.rs"]
mod child;
mod race;
