//! acplb-codex: the provider adapter that drives the `OpenAI` Codex CLI (`codex exec --json`, and
//! `codex app-server`) and decodes what it reports into ACP session updates.
//!
//! The crate root is the floor both transports stand on (options, prepare, outcome, the
//! renderers in `render/`, Codex's [`items`]); [`exec`] and [`appserver`] are siblings that each
//! implement the provider session and import only from the floor; `adapter/` is the one place
//! that names both (ADR 0018).
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod adapter;
pub mod appserver;
mod caller;
mod catalog;
pub mod command;
pub mod exec;
mod images;
mod instructions;
pub mod items;
mod mcp;
mod options;
mod outcome;
pub mod output;
mod prepare;
mod profiles;
mod render;
mod routing;
mod skills;
mod transcript;

pub use adapter::{CodexAdapter, Transport};
pub use catalog::{BUILTIN_DEFAULT_MODEL, catalog, default_catalog};
pub use mcp::McpLauncher;
pub use options::CodexOptions;
pub use render::DecoderOptions;
pub use transcript::session_dir_name;
