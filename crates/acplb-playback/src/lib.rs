//! acplb-playback: record, replay and check acplb sessions; a scripted mock of the `OpenAI` Responses API.
//!
//! A [`scenario::Scenario`] holds one ACP session through acplb: what the client sent, what
//! each Codex process printed, and acplb's expected (normalized) output. [`record`] makes one
//! from a live session, [`replay`] runs one through the real acplb with playback itself standing
//! in for Codex ([`standin`]), [`check`] compares, [`decode`] shows what a Codex stream becomes.
//! `dev-docs/scenarios.md` describes the file format.
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod check;
pub mod client;
pub mod corpus;
pub mod decode;
pub mod error;
pub mod locate;
pub mod mcp_echo;
pub mod mock_model;
pub mod normalize;
pub mod output;
pub mod record;
pub mod replay;
pub mod scenario;
pub mod standin;

pub use error::PlaybackError;
