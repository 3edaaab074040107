//! Sessions that outlast the process: where their files live (`state.rs`), how they are opened
//! (`files.rs`: no links, regular files only), the hold on an open session (`hold.rs`), deleting one (`delete.rs`), the
//! journal each session appends to (`journal/`), the registry indexing them (`registry/`) and the input
//! queue through which other processes send them messages (`queue/`).

pub mod delete;
pub mod files;
pub mod hold;
pub mod journal;
pub mod queue;
pub mod registry;
pub mod shelf;
pub mod state;
