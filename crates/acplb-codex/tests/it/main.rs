//! Integration tests of `acplb-codex`, in one test binary as the workspace convention asks.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test helpers fail loudly")]

mod appserver_fixtures;
mod decode_fixtures;
mod snapshot_all;
