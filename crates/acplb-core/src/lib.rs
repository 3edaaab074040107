//! acplb-core: the provider-agnostic runtime of acplb (ACP server, session actors, process
//! transport, permission modes, plugin pipeline, telemetry).
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod acp2;
pub mod auth;
pub mod capabilities;
pub mod client;
pub mod error;
pub mod permission;
pub mod plugin;
pub mod provider;
mod recent;
pub mod redact;
pub mod routing;
pub mod runtime;
pub mod secrets;
pub mod session;
pub mod sessions;
pub mod telemetry;
pub mod toml_text;
pub mod transport;

pub use tokio_util::sync::CancellationToken;
