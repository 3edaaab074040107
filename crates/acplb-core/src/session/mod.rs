//! Sessions: one actor per ACP session, owning its provider session, mode and settings.

mod actor;
pub(crate) mod file_report;
pub(crate) mod hold;
pub mod modes;
pub mod options;
pub mod prompt;
mod recommended;
pub(crate) mod sink;
pub(crate) mod subagent_wire;

pub(crate) use actor::{Inbox, SessionActor, SessionMsg, SessionParts};
pub use sink::AcpSink;
