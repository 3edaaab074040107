//! The `codex app-server` transport's pure parts: notifications of one thread as ACP updates
//! ([`decode`]) and Codex's approval requests as ACP permission prompts ([`approval`]).

pub mod approval;
pub mod decode;
mod edits;
mod signal;
mod text;
mod tools;
mod user_input;
mod wire;
