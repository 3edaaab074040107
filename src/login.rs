//! `acplb login`: signs Codex in from a terminal by running `codex login` there (the terminal
//! sign-in that editors offer runs this; ADR 0030). Codex talks to the user itself; acplb adds
//! the global `-c` overrides, so the sign-in lands where sessions will look for it.

use std::ffi::OsString;
use std::process::Command;

use anyhow::Context as _;

use crate::cli::Cli;
use crate::codex_path;

/// Runs `codex [-c …] login ARGS` with this terminal; `Ok(true)` when Codex signed in.
pub(crate) fn run(cli: &Cli, args: &[OsString]) -> anyhow::Result<bool> {
    let (program, _) = codex_path::resolve(cli.codex.as_deref());
    let mut cmd = Command::new(&program);
    for over in &cli.config {
        cmd.arg("-c").arg(over);
    }
    let status = cmd
        .arg("login")
        .args(args)
        .status()
        .with_context(|| format!("could not run `{} login`", program.display()))?;
    Ok(status.success())
}
