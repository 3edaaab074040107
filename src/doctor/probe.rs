//! One external call made by `acplb doctor`: run with a time limit, in its own process group
//! (killed as a whole when the limit passes), its output bounded and cleaned for a terminal.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use acplb_core::transport::{Process, ProcessEvent, ProcessSpec, StdinMode};

/// The most output kept from one call, in bytes, per stream; what is printed is cut further.
const KEEP_BYTES: usize = 8 * 1024;
/// The longest text `clean` returns, in characters.
pub(crate) const MAX_SHOWN_CHARS: usize = 400;

/// What an external call did.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It exited (or was killed by a signal) within the limit.
    Exited {
        status: ExitStatus,
        /// Its stdout, at most `KEEP_BYTES`, raw (see [`clean`]).
        stdout: String,
        /// The start of its stderr, at most `KEEP_BYTES`, raw.
        stderr: String,
    },
    /// It did not finish within the limit and was killed.
    TimedOut,
    /// It could not be started.
    NotStarted(String),
}

/// `program args...` with stdin at `/dev/null`, in `cwd`, stopped after `limit`.
pub(crate) async fn run(program: &Path, args: &[&str], cwd: PathBuf, limit: Duration) -> Outcome {
    let spec = ProcessSpec {
        program: program.to_owned(),
        args: args.iter().map(OsString::from).collect(),
        cwd,
        env: Vec::new(),
        env_remove: Vec::new(),
        stdin: StdinMode::Null,
        max_line_bytes: KEEP_BYTES,
        stderr_tail_bytes: 0,
    };
    let mut process = match Process::spawn(spec) {
        Ok(p) => p,
        Err(e) => return Outcome::NotStarted(format!("{e:#}")),
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let collect = async {
        loop {
            match process.next_event().await {
                ProcessEvent::Stdout(line) => keep(&mut stdout, &line),
                ProcessEvent::Stderr(line) => keep(&mut stderr, &line),
                ProcessEvent::StdoutOversized { .. } => {}
                ProcessEvent::Exited(status) => return status,
            }
        }
    };
    if let Ok(status) = tokio::time::timeout(limit, collect).await {
        return Outcome::Exited {
            status,
            stdout,
            stderr,
        };
    }
    // The whole group goes: a wrapper script's children would otherwise keep running.
    process.stop(Duration::from_millis(200)).await;
    Outcome::TimedOut
}

/// Appends `line` to `kept` while it holds less than `KEEP_BYTES` (the start of the output is
/// where programs say what went wrong; `clean` cuts it further).
fn keep(kept: &mut String, line: &str) {
    if kept.len() < KEEP_BYTES {
        let room = KEEP_BYTES - kept.len();
        let mut cut = line.len().min(room);
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        kept.push_str(&line[..cut]);
        kept.push('\n');
    }
}

/// `text` made safe to print: ANSI escape sequences and control characters removed (a line
/// break is kept), secrets redacted, surrounding blank space trimmed, and cut to `max_chars`
/// characters (marked with `…`).
pub(crate) fn clean(text: &str, max_chars: usize) -> String {
    let stripped = strip_ansi_escapes::strip_str(text);
    let printable: String = stripped
        .chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect();
    let redacted = acplb_core::redact::redact(printable.trim());
    match redacted.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &redacted[..cut]),
        None => redacted,
    }
}

/// The first non-blank line of `text`, cleaned.
pub(crate) fn first_line(text: &str) -> String {
    let cleaned = clean(text, MAX_SHOWN_CHARS);
    cleaned
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_escapes_and_control_characters() {
        let raw = "\u{1b}[31mcodex-cli\u{1b}[0m 1.0\u{1b}]0;pwned\u{7}\u{1}\u{8}\r\nnext";
        assert_eq!(clean(raw, 100), "codex-cli 1.0\nnext");
        // A C1 control (here CSI, U+009B) goes as well; what followed it is plain text then.
        assert_eq!(clean("a\u{9b}b\u{7f}c", 100), "abc");
    }

    #[test]
    fn clean_bounds_the_length_on_a_char_boundary() {
        let out = clean(&"é".repeat(10_000), 5);
        assert_eq!(out, "ééééé…");
    }

    #[test]
    fn clean_redacts_secrets() {
        let out = clean("token=abcdefghijklmnopqrstuvwxyz0123", 200);
        assert!(!out.contains("abcdefghij"), "{out}");
    }

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  \n codex-cli 0.169.0 \nmore"), "codex-cli 0.169.0");
    }

    #[tokio::test]
    async fn a_hung_call_is_killed_with_its_children_after_the_limit() {
        let started = std::time::Instant::now();
        let out = run(
            Path::new("/bin/sh"),
            &["-c", "sleep 30 & sleep 30; wait"],
            std::env::temp_dir(),
            Duration::from_millis(200),
        )
        .await;
        assert!(matches!(out, Outcome::TimedOut), "{out:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn output_and_status_of_a_finished_call() {
        let out = run(
            Path::new("/bin/sh"),
            &["-c", "echo out; echo err >&2; exit 3"],
            std::env::temp_dir(),
            Duration::from_secs(10),
        )
        .await;
        let Outcome::Exited {
            status,
            stdout,
            stderr,
        } = out
        else {
            panic!("{out:?}")
        };
        assert_eq!(status.code(), Some(3));
        assert_eq!((stdout.as_str(), stderr.as_str()), ("out\n", "err\n"));
    }

    #[tokio::test]
    async fn a_missing_program_is_not_started() {
        let out = run(
            Path::new("/nope/codex"),
            &[],
            std::env::temp_dir(),
            Duration::from_secs(1),
        )
        .await;
        assert!(
            matches!(out, Outcome::NotStarted(ref e) if e.contains("/nope/codex")),
            "{out:?}"
        );
    }
}
