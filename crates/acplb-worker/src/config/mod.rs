//! `workers.toml`: the daemon and its agents (filled in next).
