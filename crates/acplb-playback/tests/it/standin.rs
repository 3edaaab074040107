//! playback as `codex`: the stand-in prints a recorded run and exits as Codex does on SIGINT
//! (1) and SIGTERM (143); without its state directory it says what is missing.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use acplb_playback::scenario::{End, EventKind, ProviderEvent, ProviderRun};
use acplb_playback::standin::{STATE_DIR_VAR, Speed, State, read_seen, write_state};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::bins::PLAYBACK;

fn codex_link(dir: &std::path::Path) -> std::path::PathBuf {
    let link = dir.join("codex");
    std::os::unix::fs::symlink(PLAYBACK, &link).unwrap();
    link
}

fn state_with(dir: &std::path::Path, end: End) {
    let run = ProviderRun {
        session: "<session-1>".into(),
        turn: 1,
        events: vec![
            ProviderEvent {
                t_ms: 0,
                kind: EventKind::Stdout(r#"{"type":"thread.started","thread_id":"t"}"#.into()),
                line: 1,
            },
            ProviderEvent {
                t_ms: 0,
                kind: EventKind::Stderr("a warning".into()),
                line: 2,
            },
        ],
        end,
        line: 1,
    };
    let state = State {
        scenario: "s.toml".into(),
        cwd: dir.to_path_buf(),
        speed: Speed::Max,
        runs: vec![run],
        transport: acplb_playback::scenario::Transport::Exec,
        app_servers: Vec::new(),
    };
    write_state(&dir.join("state"), &state).unwrap();
}

/// Starts the stand-in, waits for its first stdout line, sends `signal`, returns the exit code.
fn interrupted_with(signal: Signal) -> Option<i32> {
    let dir = tempfile::tempdir().unwrap();
    state_with(dir.path(), End::Cancelled);
    let mut child = Command::new(codex_link(dir.path()))
        .args(["exec", "--json", "--", "-"])
        .env(STATE_DIR_VAR, dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("thread.started"), "{line}");
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), signal).unwrap();
    let code = child.wait().unwrap().code();
    let seen = read_seen(&dir.path().join("state"));
    assert_eq!(seen[0].argv, ["exec", "--json", "--", "-"]);
    code
}

#[test]
fn sigint_exits_1_and_sigterm_exits_143_like_codex() {
    assert_eq!(interrupted_with(Signal::SIGINT), Some(1));
    assert_eq!(interrupted_with(Signal::SIGTERM), Some(143));
}

#[test]
fn a_finished_run_exits_with_the_recorded_code_and_counts_stdin() {
    let dir = tempfile::tempdir().unwrap();
    state_with(dir.path(), End::Exit(3));
    let mut child = Command::new(codex_link(dir.path()))
        .env(STATE_DIR_VAR, dir.path().join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"prompt").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "a warning\n");
    assert_eq!(read_seen(&dir.path().join("state"))[0].stdin_bytes, 6);
}

#[test]
fn started_as_codex_without_a_replay_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(codex_link(dir.path()))
        .arg("exec")
        .env_remove(STATE_DIR_VAR)
        .env_remove("PLAYBACK_WRAP_CODEX")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("started as `codex` without PLAYBACK_STANDIN_DIR"),
        "{stderr}"
    );
}

#[test]
fn a_missing_state_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(codex_link(dir.path()))
        .env(STATE_DIR_VAR, dir.path().join("nope"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nope/state.json"), "{stderr}");
}
