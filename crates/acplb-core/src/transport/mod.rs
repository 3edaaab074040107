//! Bytes to frames and child processes: the only code in acplb that touches a provider's pipes.

mod lines;
mod process;
mod sweep;
mod tail;

pub use lines::{BoundedLines, Frame};
pub use process::{Process, ProcessEvent, ProcessSpec, StdinMode};
pub use sweep::MARKER_VAR;
pub use tail::StderrTail;
