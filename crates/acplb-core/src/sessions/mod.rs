//! Sessions that outlast the process: where their files live (`state.rs`), the journal each
//! session appends to (`journal/`) and the registry indexing them (`registry/`).

pub mod journal;
pub mod registry;
pub mod state;
