//! The command line: `doctor`, `--log-file`, `--help`.

use std::process::Command;
use std::time::Duration;

use crate::harness::{Acplb, Updates, open_session};
use crate::live::Live;

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");

#[test]
fn doctor_reports_a_missing_codex_and_exits_non_zero() {
    let out = Command::new(ACPLB)
        .arg("doctor")
        .env("ACPLB_CODEX", "/nope/codex")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("NOT FOUND") && stdout.contains("/nope/codex"),
        "{stdout}"
    );
    assert!(stdout.contains("npm install -g @openai/codex"), "{stdout}");
}

#[tokio::test]
async fn doctor_finds_codex_its_version_and_a_working_sandbox() {
    let live = Live::start();
    let out = Command::new(ACPLB)
        .arg("doctor")
        .envs(live.env.env_vars())
        .env("ACPLB_CODEX", live.env.codex_path())
        .env_remove("CODEX_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_ACCESS_TOKEN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("codex-cli 0.169.0"), "{stdout}");
    assert!(stdout.contains("sandbox:  ok"), "{stdout}");
    // The throwaway CODEX_HOME holds no login: the real `codex login status` says so.
    assert!(stdout.contains("login:    NOT LOGGED IN"), "{stdout}");
}

#[test]
fn help_explains_options_modes_and_environment() {
    let out = Command::new(ACPLB).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--codex",
        "ACPLB_CODEX",
        "-c, --config",
        "--log-file",
        "read-only",
        "full-access",
        "RUST_LOG",
        "doctor",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}: {help}");
    }
}

#[tokio::test]
async fn log_file_gets_the_logs_and_stdout_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("logs/acplb.log");
    let log_arg = log.display().to_string();
    let mut acplb = Acplb::spawn(
        &["--log-file", &log_arg],
        &[("ACPLB_CODEX".into(), "/nope".into())],
        dir.path(),
    );
    let cwd = dir.path().to_owned();
    acplb
        .client(&Updates::default(), async |cx| {
            open_session(&cx, &cwd).await.map(|_| ())
        })
        .await
        .unwrap();
    assert_eq!(acplb.wait_exit(Duration::from_secs(5)).await.0, Some(0));
    let text = std::fs::read_to_string(&log).expect("the log file exists");
    assert!(text.contains("session created"), "{text}");
}

/// `acplb` typed in a terminal says on stderr what it waits for (an editor speaking ACP), and
/// ends on Ctrl-D's end of input; run by an editor (stdin a pipe), it says nothing of the kind.
#[test]
fn acplb_in_a_terminal_says_what_it_waits_for() {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    let hint = "speaks the Agent Client Protocol";
    let pty = nix::pty::openpty(None, None).expect("a pseudo-terminal");
    // Neither end may leak into children (acplb holding the master would never see the end).
    for fd in [&pty.master, &pty.slave] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).unwrap();
    }
    let mut child = Command::new(ACPLB)
        .env("ACPLB_CODEX", "/nope/codex")
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::from(pty.slave))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-D at the start of a line: end of input, and acplb ends.
    let mut master = std::fs::File::from(pty.master);
    std::io::Write::write_all(&mut master, b"\x04").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("acplb did not end on Ctrl-D");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    drop(master);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(
        stderr.contains(hint) && stderr.contains("acplb doctor"),
        "{stderr}"
    );
    let piped = Command::new(ACPLB)
        .env("ACPLB_CODEX", "/nope/codex")
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(!stderr.contains(hint), "{stderr}");
}
