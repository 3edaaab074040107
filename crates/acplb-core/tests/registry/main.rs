//! The session registry across processes and files: concurrent writers lose nothing, a writer
//! killed mid-write leaves a readable file and a free lock, paging is stable, a corrupt file
//! hides nothing else.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly and read top to bottom"
)]
#![allow(unreachable_pub, missing_debug_implementations)]

#[path = "../support/child_process.rs"]
mod child_process;

mod child;
mod contention;
mod corrupt;
mod kill;
mod page;
