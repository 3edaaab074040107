//! acplb-codex: the provider adapter that drives the `OpenAI` Codex CLI (`codex exec --json`, and
//! `codex app-server`) and decodes what it reports into ACP session updates.
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod adapter;
pub mod appserver;
mod args;
mod catalog;
pub mod command;
pub mod decode;
mod exec;
mod files;
mod images;
mod instructions;
mod mcp;
pub mod output;
mod transcript;
mod turn;
pub mod wire;

pub use adapter::{CodexAdapter, Transport};
pub use catalog::{BUILTIN_DEFAULT_MODEL, catalog, default_catalog};
pub use exec::CodexOptions;
pub use mcp::McpLauncher;
pub use transcript::session_dir_name;
