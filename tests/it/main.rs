//! End-to-end tests: the real `acplb` binary over real stdio with a real ACP client, and the
//! real Codex CLI against the project's mock model on 127.0.0.1.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::print_stdout,
    clippy::items_after_statements,
    clippy::cast_possible_wrap,
    clippy::trivially_copy_pass_by_ref,
    reason = "tests fail loudly and read top to bottom"
)]
#![allow(unreachable_pub, clippy::missing_panics_doc, missing_debug_implementations)]

mod acpx;
mod air;
pub(crate) mod air_failures;
mod air_reports;
mod air_subagents;
mod air_tasks;
mod appserver;
mod async_questions;
mod atm;
mod auth_status;
mod background;
mod batch_get;
mod cli;
mod codex;
mod compaction;
mod config;
mod delete;
mod fork;
mod goals;
mod harness;
mod hooks;
mod hostile;
mod lifecycle;
mod live;
mod login;
mod mcp_codex;
pub mod mcp_login;
mod mcp_status;
mod models;
pub(crate) mod plan_mode;
mod profiles;
mod protocol;
mod protocol_v2;
mod protocol_v2_subagents;
mod providers;
mod queue_cli;
mod queue_delivery;
mod reattach;
mod session_setup;
mod sessions;
mod sessions_cli;
mod shelf;
mod skills;
pub(crate) mod subagent_asks;
pub(crate) mod subagent_cancel;
pub(crate) mod subagent_sessions;
mod subagents;
mod terminal_output;
mod tool_names;
pub mod upgrade;
mod vendor;
mod worker;
