//! The integration tests of acplb-playback: the mock model over real HTTP, the `playback` binary, and real Codex.
// Test helpers outside `#[test]` functions panic on purpose, like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod app_server;
mod bad_input;
mod bins;
mod cli;
mod codex_exec;
mod corpus;
mod mcp_echo;
mod mock_http;
mod record;
mod standin;
mod util;
