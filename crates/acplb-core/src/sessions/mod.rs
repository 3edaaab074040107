//! Sessions that outlast the process: where their files live (`state.rs`), the journal each
//! session appends to (`journal/`), the registry indexing them (`registry/`) and the input
//! queue through which other processes send them messages (`queue/`).

pub mod journal;
pub mod queue;
pub mod registry;
pub mod state;
