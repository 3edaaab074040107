//! `acplb doctor`: where Codex is, its version, and whether its sandbox can run commands.

use std::io::Write as _;
use std::process::{Command, Stdio};

use crate::cli::Cli;
use crate::codex_path;

pub(crate) fn run(cli: &Cli) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    let (program, found) = codex_path::resolve(cli.codex.as_deref());
    if !found {
        writeln!(out, "codex:    NOT FOUND ({})", program.display())?;
        writeln!(
            out,
            "          install it with `npm install -g @openai/codex`, or pass --codex PATH / ACPLB_CODEX"
        )?;
        return Ok(false);
    }
    writeln!(out, "codex:    {}", program.display())?;
    let version = Command::new(&program)
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    let version_ok = match version {
        Ok(o) if o.status.success() => {
            writeln!(out, "version:  {}", String::from_utf8_lossy(&o.stdout).trim())?;
            true
        }
        Ok(o) => {
            writeln!(
                out,
                "version:  FAILED ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            )?;
            false
        }
        Err(e) => {
            writeln!(out, "version:  FAILED to run: {e}")?;
            false
        }
    };
    let home = std::env::var("CODEX_HOME").unwrap_or_else(|_| "~/.codex (default)".into());
    writeln!(out, "home:     {home}")?;
    let dir = std::env::temp_dir();
    let sandbox = Command::new(&program)
        .args(cli.config.iter().flat_map(|c| ["-c", c.as_str()]))
        .args(["sandbox", "--", "/bin/sh", "-c", "echo sandbox-ok"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output();
    let sandbox_ok = match sandbox {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("sandbox-ok") => {
            writeln!(out, "sandbox:  ok (a read-only sandboxed command ran)")?;
            true
        }
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            writeln!(out, "sandbox:  FAILED ({}): {}", o.status, err.trim())?;
            if err.contains("codex-linux-sandbox") {
                writeln!(
                    out,
                    "          Codex could not find its sandbox helper: put a `codex-linux-sandbox` symlink to the codex\n          binary on PATH, or use a CODEX_HOME outside /tmp."
                )?;
            }
            if err.contains("bwrap") && !err.contains("codex-linux-sandbox") {
                writeln!(
                    out,
                    "          bubblewrap failed: install it (`apt-get install bubblewrap`) or check user namespaces."
                )?;
            }
            false
        }
        Err(e) => {
            writeln!(out, "sandbox:  FAILED to run: {e}")?;
            false
        }
    };
    Ok(version_ok && sandbox_ok)
}
