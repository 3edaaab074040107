//! Integration tests of `acplb-codex`, in one test binary as the workspace convention asks.

mod decode_fixtures;
