//! The integration tests of acplb-playback: the mock model over real HTTP, the `playback` binary, and real Codex.
// Test helpers outside `#[test]` functions panic on purpose, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cli;
mod codex_exec;
mod mock_http;
mod util;
