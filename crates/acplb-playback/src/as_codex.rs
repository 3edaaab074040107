//! playback started as `codex` (through a symlink of that name): the stand-in for Codex during a
//! replay (`PLAYBACK_STANDIN_DIR` set), or the corpus recorder's wrapper around the real Codex
//! (`PLAYBACK_WRAP_CODEX` set).

use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

use acplb_playback::corpus::{WRAP_CODEX_VAR, WRAP_INJECT_VAR, relay};
use acplb_playback::standin::{self, Exit};

use crate::commands::report;

/// Runs the stand-in or the wrapper when the program name is `codex`; `None` otherwise.
pub(crate) fn run_if_codex() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let program = PathBuf::from(args.next()?);
    if program.file_name()? != "codex" {
        return None;
    }
    let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(dir) = std::env::var_os(standin::STATE_DIR_VAR) {
        return Some(standin_main(Path::new(&dir), rest));
    }
    if let Some(real) = std::env::var_os(WRAP_CODEX_VAR) {
        let inject = std::env::var(WRAP_INJECT_VAR).unwrap_or_default();
        return Some(wrapper_main(Path::new(&real), &inject, &rest));
    }
    report(&format!(
        "playback: started as `codex` without {} (a replay's stand-in) or {WRAP_CODEX_VAR} (the corpus wrapper); run `playback --help`",
        standin::STATE_DIR_VAR
    ));
    Some(ExitCode::from(2))
}

fn standin_main(dir: &Path, argv: Vec<String>) -> ExitCode {
    match standin::run(dir, argv) {
        Ok(Exit::Code(code)) => exit_code(code),
        Ok(Exit::Signal(signal)) => die_by(signal),
        Err(e) => {
            report(&format!("playback (codex stand-in): {e}"));
            ExitCode::from(2)
        }
    }
}

/// Copies Codex's stdout with one line injected; stdin and stderr are Codex's own.
fn wrapper_main(real: &Path, inject: &str, args: &[String]) -> ExitCode {
    let child = std::process::Command::new(real)
        .args(args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            report(&format!(
                "playback (codex wrapper): cannot start `{}`: {e}",
                real.display()
            ));
            return ExitCode::from(2);
        }
    };
    if let Some(out) = child.stdout.take()
        && let Err(e) = relay(std::io::BufReader::new(out), std::io::stdout().lock(), inject)
    {
        report(&format!("playback (codex wrapper): {e}"));
    }
    match child.wait() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt as _;
            match (status.code(), status.signal()) {
                (Some(code), _) => exit_code(code),
                (None, Some(signal)) => die_by(signal),
                (None, None) => ExitCode::from(2),
            }
        }
        Err(e) => {
            report(&format!("playback (codex wrapper): {e}"));
            ExitCode::from(2)
        }
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

/// Ends the process by `signal`, as the recorded Codex did. SIGINT and SIGTERM, which the
/// stand-in handles itself, end it by SIGKILL instead (real Codex exits on those, never dies).
fn die_by(signal: i32) -> ExitCode {
    use nix::sys::signal::{Signal, raise};
    let sig = match Signal::try_from(signal) {
        Ok(Signal::SIGINT | Signal::SIGTERM) | Err(_) => Signal::SIGKILL,
        Ok(s) => s,
    };
    if let Err(e) = raise(sig) {
        report(&format!("playback (codex stand-in): cannot raise {sig}: {e}"));
    }
    ExitCode::from(128 + u8::try_from(signal & 0x7f).unwrap_or(0))
}
