//! acplb-playback: record, replay and check acplb sessions; a scripted mock of the `OpenAI` Responses API.
#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod mock_model;
