//! `acplb doctor`: where Codex is, its version, whether it is logged in, and whether its
//! sandbox can run commands. Every call to Codex has a time limit and its output is cleaned
//! before it is printed.

mod login;
mod probe;
mod running;

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;

use crate::cli::{Cli, DoctorArgs};
use crate::codex_path;
use probe::Outcome;

/// Runs the checks and prints the report on stdout; `Ok(false)` when Codex cannot be used.
pub(crate) fn run(cli: &Cli, args: &DoctorArgs) -> anyhow::Result<bool> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting tokio")?;
    let mut out = std::io::stdout().lock();
    runtime.block_on(check(cli, args.timeout, &mut out))
}

async fn check(cli: &Cli, limit_secs: u64, out: &mut impl Write) -> anyhow::Result<bool> {
    let limit = Duration::from_secs(limit_secs);
    let (program, found) = codex_path::resolve(cli.codex.as_deref());
    if !found {
        not_found(out, &program)?;
        return Ok(false);
    }
    writeln!(out, "codex:    {}", program.display())?;
    let tmp = std::env::temp_dir();
    let version = probe::run(&program, &["--version"], tmp.clone(), limit).await;
    let version_ok = match version {
        Outcome::Exited { status, stdout, .. } if status.success() => {
            let on_disk = probe::first_line(&stdout);
            writeln!(out, "version:  {on_disk}")?;
            servers(&on_disk, limit, out).await?;
            true
        }
        Outcome::TimedOut => {
            writeln!(
                out,
                "version:  TIMED OUT: `{} --version` gave no answer within {limit_secs} s (stopped)",
                program.display()
            )?;
            writeln!(
                out,
                "          skipping the other checks: this binary does not behave like Codex"
            )?;
            return Ok(false);
        }
        other => {
            writeln!(out, "version:  FAILED {}", failure(&other))?;
            false
        }
    };
    let home = std::env::var("CODEX_HOME").unwrap_or_else(|_| "~/.codex (default)".into());
    writeln!(out, "home:     {home}")?;
    let transport_ok = transport(cli, &program, limit, out).await?;

    let login_args = with_overrides(cli, &["login", "status"]);
    let login = probe::run(&program, &login_args, tmp.clone(), limit).await;
    let env_keys = login::keys_in_env(|k| std::env::var(k).ok());
    let verdict = login::verdict(&login, &env_keys, limit_secs);
    writeln!(out, "login:    {}", verdict.line)?;
    for hint in &verdict.hints {
        writeln!(out, "          {hint}")?;
    }

    let sandbox_args = with_overrides(cli, &["sandbox", "--", "/bin/sh", "-c", "echo sandbox-ok"]);
    let sandbox = probe::run(&program, &sandbox_args, tmp, limit).await;
    let sandbox_ok = match sandbox {
        Outcome::Exited {
            status, ref stdout, ..
        } if status.success() && stdout.contains("sandbox-ok") => {
            writeln!(out, "sandbox:  ok (a read-only sandboxed command ran)")?;
            true
        }
        Outcome::TimedOut => {
            writeln!(
                out,
                "sandbox:  TIMED OUT: `codex sandbox` gave no answer within {limit_secs} s (stopped)"
            )?;
            false
        }
        other => {
            writeln!(out, "sandbox:  FAILED {}", failure(&other))?;
            if let Outcome::Exited { stderr, .. } = &other {
                sandbox_hints(out, stderr)?;
            }
            false
        }
    };
    Ok(version_ok && transport_ok && sandbox_ok)
}

/// The app-servers running for acplb now, each with its version next to the binary's on disk.
async fn servers(on_disk: &str, limit: Duration, out: &mut impl Write) -> anyhow::Result<()> {
    for server in running::servers(limit).await {
        let note = if server.version == on_disk {
            String::new()
        } else {
            " (not the version above)".to_owned()
        };
        writeln!(
            out,
            "running:  codex app-server pid {}: {}{note}",
            server.pid, server.version
        )?;
    }
    Ok(())
}

/// Which transport `acplb serve` will use, and whether this Codex has it.
async fn transport(cli: &Cli, program: &Path, limit: Duration, out: &mut impl Write) -> anyhow::Result<bool> {
    let choice = match crate::settings::transport(cli) {
        Ok(choice) => choice,
        Err(e) => {
            writeln!(out, "transport: FAILED {e:#}")?;
            return Ok(false);
        }
    };
    let from = format!("from {}", choice.from);
    if choice.transport == acplb_codex::Transport::Exec {
        writeln!(out, "transport: exec ({from}): one `codex exec` per prompt")?;
        return Ok(true);
    }
    let probe = probe::run(program, &["app-server", "--help"], std::env::temp_dir(), limit).await;
    if matches!(&probe, Outcome::Exited { status, .. } if status.success()) {
        writeln!(
            out,
            "transport: app-server ({from}): one `codex app-server` shared by all sessions"
        )?;
        Ok(true)
    } else {
        writeln!(out, "transport: app-server ({from}): FAILED {}", failure(&probe))?;
        writeln!(
            out,
            "          this Codex has no `app-server`; update it, or run acplb with `--transport exec`"
        )?;
        Ok(false)
    }
}

/// `-c KEY=VALUE` for every override, then `args`.
fn with_overrides<'a>(cli: &'a Cli, args: &[&'a str]) -> Vec<&'a str> {
    let mut all: Vec<&str> = cli.config.iter().flat_map(|c| ["-c", c.as_str()]).collect();
    all.extend_from_slice(args);
    all
}

/// `(exit status): stderr`, or why it did not start; cleaned and bounded.
fn failure(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Exited { status, stderr, .. } => {
            let said = probe::clean(stderr, probe::MAX_SHOWN_CHARS).replace('\n', "\n          ");
            format!("({status}): {said}")
        }
        Outcome::TimedOut => "(timed out)".to_owned(),
        Outcome::NotStarted(e) => format!("to run: {}", probe::clean(e, probe::MAX_SHOWN_CHARS)),
    }
}

fn sandbox_hints(out: &mut impl Write, stderr: &str) -> std::io::Result<()> {
    if stderr.contains("codex-linux-sandbox") {
        writeln!(
            out,
            "          Codex could not find its sandbox helper: put a `codex-linux-sandbox` symlink to the codex\n          binary on PATH, or use a CODEX_HOME outside /tmp."
        )?;
    } else if stderr.contains("bwrap") {
        writeln!(
            out,
            "          bubblewrap failed: install it (`apt-get install bubblewrap`) or check user namespaces."
        )?;
    }
    Ok(())
}

/// Where to get Codex, including a copy the project's own scripts installed.
fn not_found(out: &mut impl Write, program: &Path) -> std::io::Result<()> {
    writeln!(out, "codex:    NOT FOUND ({})", program.display())?;
    writeln!(
        out,
        "          install it with `npm install -g @openai/codex`, or pass --codex PATH / ACPLB_CODEX"
    )?;
    let copies = codex_path::installed_by_scripts(std::env::var_os("ACPLB_CACHE"), std::env::var_os("HOME"));
    if let Some(newest) = copies.first() {
        writeln!(
            out,
            "          scripts/demo and scripts/test installed one (not on PATH):"
        )?;
        writeln!(out, "            {}", newest.display())?;
        writeln!(out, "          use it with `acplb --codex {}`", newest.display())?;
        writeln!(out, "          or `export ACPLB_CODEX={}`", newest.display())?;
    }
    Ok(())
}
