//! Bytes to frames: the editor's stdio wire, and the provider's child processes (spawned in
//! their own process group, framed, stopped with their tree, swept when acplb dies, the exit
//! guard). Not every pipe is here: `atm` runs (acplb-atm), git for old texts (acplb-codex) and
//! the worker's in-process connection take theirs directly.

mod exit_guard;
mod explain;
mod flow;
mod lines;
mod parent_death;
mod proc_table;
mod process;
pub mod stdio;
mod sweep;
mod tail;

pub use exit_guard::{arm as arm_exit_guard, run_exit_guard};
pub use flow::{DEFAULT_BYTES_IN_FLIGHT, DEFAULT_UPDATES_IN_FLIGHT, OutputFlow, json_size};
pub use lines::{BoundedLines, Frame};
pub use process::{Process, ProcessEvent, ProcessSpec, StdinMode};
pub use sweep::{MARKER_VAR, find_marked_with, kill_marked_with};
pub use tail::StderrTail;
