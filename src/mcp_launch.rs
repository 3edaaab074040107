//! `acplb mcp launch`: starts a client's stdio MCP server with its `env` values, which acplb
//! hands to Codex under generated names (`ACPLB_MCP_<server>_<n>`) so that no value is ever on a
//! command line. Codex forwards those variables to this launcher, which sets each under the name
//! the client gave and replaces itself with the server (`exec`: same process, same stdio).

use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::process::Command;

use anyhow::{Context as _, bail};

use crate::cli::LaunchArgs;

/// Only returns on failure: on success the process becomes the server.
pub(crate) fn run(args: &LaunchArgs) -> anyhow::Result<bool> {
    let mut cmd = command(args, |var| std::env::var_os(var))?;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot start the MCP server `{program}`"))
}

/// The server's command with its environment renamed; `env` reads this process's environment.
fn command(args: &LaunchArgs, env: impl Fn(&str) -> Option<OsString>) -> anyhow::Result<Command> {
    let Some((program, rest)) = args.command.split_first() else {
        bail!("no MCP server command after `--`");
    };
    let mut cmd = Command::new(program);
    cmd.args(rest);
    for mapping in &args.env {
        // The variable is ours and has no `=`; the client's name is everything before it.
        let Some((name, var)) = mapping.rsplit_once('=') else {
            bail!("`--env {mapping}` must be NAME=VAR");
        };
        if name.is_empty() || name.contains('\0') {
            bail!("`--env {mapping}`: `{name}` is not a variable name");
        }
        cmd.env_remove(var);
        if let Some(value) = env(var) {
            cmd.env(name, value);
        } else {
            // Codex did not forward it: the server runs without it rather than not at all.
            tracing::warn!(name, var, "the value for an MCP server's variable did not arrive");
        }
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(env: &[&str], command: &[&str]) -> LaunchArgs {
        LaunchArgs {
            env: env.iter().map(|s| (*s).to_owned()).collect(),
            command: command.iter().map(OsString::from).collect(),
        }
    }

    #[test]
    fn variables_are_renamed_and_the_generated_ones_removed() {
        let args = launch(
            &["GITHUB_TOKEN=ACPLB_MCP_1_0", "DEBUG=ACPLB_MCP_1_1"],
            &["srv", "--stdio"],
        );
        let cmd = command(&args, |var| Some(format!("value of {var}").into())).unwrap();
        assert_eq!(cmd.get_program(), "srv");
        let envs: Vec<(String, Option<String>)> = cmd
            .get_envs()
            .map(|(k, v)| {
                (
                    k.to_string_lossy().into_owned(),
                    v.map(|v| v.to_string_lossy().into_owned()),
                )
            })
            .collect();
        assert!(envs.contains(&("GITHUB_TOKEN".into(), Some("value of ACPLB_MCP_1_0".into()))));
        assert!(envs.contains(&("DEBUG".into(), Some("value of ACPLB_MCP_1_1".into()))));
        assert!(envs.contains(&("ACPLB_MCP_1_0".into(), None)), "{envs:?}");
    }

    #[test]
    fn bad_mappings_are_clear_errors() {
        let err = command(&launch(&["NOEQUALS"], &["srv"]), |_| None).unwrap_err();
        assert!(err.to_string().contains("NAME=VAR"), "{err}");
        let err = command(&launch(&[], &[]), |_| None).unwrap_err();
        assert!(err.to_string().contains("no MCP server command"), "{err}");
    }
}
