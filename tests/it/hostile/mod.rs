//! Bad input and faults, end to end: what a hostile or unlucky user can do to acplb, and what
//! acplb must do about it (a clear error, nothing lost, nothing left running). Every new feature
//! adds its own cases here, one file per area.

mod air;
mod air_reports;
mod air_tasks;
mod appserver;
mod async_questions;
mod auth_updates;
mod background;
mod batch_get;
mod cli;
pub(crate) mod codex;
mod compaction;
mod composer;
mod delete;
mod flow;
mod goals;
mod hooks;
mod login;
mod mail;
mod mcp_codex;
mod mcp_login;
mod mcp_status;
mod models;
mod plan_updates;
mod profiles;
mod protocol_v2;
mod providers;
mod questions;
mod queue;
mod session_setup;
mod shelf;
mod signals;
mod skills;
mod stalled_open;
pub mod stand_in;
mod state;
mod stderr_secrets;
mod stderr_unread;
mod subagents;
mod terminal_output;
mod tool_names;
mod unresponsive;
mod upgrade;
mod vendor;
mod wire;
mod worker;
