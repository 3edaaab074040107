//! `acplb mcp codex` end to end: rmcp's MCP client over the real binary's stdio, the real
//! Codex against the mock model, on the transport the run selects (`ACPLB_TRANSPORT`, which the
//! acplb under test inherits).

mod approvals;
pub mod client;
pub mod forms;
mod mail;
mod overrides;
mod resume;
pub mod roles;
mod stops;
mod turns;
