//! In-process tests of the runtime: the real `Server` with a scripted provider and an in-memory
//! editor (the SDK's client role over an in-process channel), on tokio's paused clock. They
//! check queueing, cancel, permission asks, steering and shutdown order without a real Codex.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "tests fail loudly and read top to bottom"
)]
#![allow(unreachable_pub, missing_debug_implementations)]

mod editor;
mod lifecycle;
mod permission;
mod queue;
mod scripted;
mod steer;
mod timeline;
