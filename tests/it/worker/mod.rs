//! `acplb worker` end to end: the real daemon binary, the real Codex CLI against the mock
//! model, teammates writing Claude-format mail with the ATM library, on both transports.

pub mod rig;

pub mod atm_cli;
mod hostile;
mod lifecycle;
mod mail;
mod policy;
