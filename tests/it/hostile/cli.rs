//! The command line under bad input: `--log-file` that cannot be a log file, a bad settings file,
//! stderr captured by a pipe, and `acplb doctor` facing a Codex that hangs, prints escapes or is
//! not on PATH.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{eventually, processes_with_env};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");

/// `acplb ARGS` with stdin at `/dev/null`, Codex at `/nope/codex`, logs at `info`.
fn acplb(args: &[&OsStr]) -> Output {
    Command::new(ACPLB)
        .args(args)
        .env("ACPLB_CODEX", "/nope/codex")
        .env("RUST_LOG", "info")
        .env_remove("ACPLB_LOG_FILE")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn assert_no_panic(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn log_file_that_is_a_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = acplb(&["--log-file".as_ref(), dir.path().as_os_str(), "doctor".as_ref()]);
    assert_no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot open the log file") && stderr.contains("Is a directory"),
        "{stderr}"
    );
}

#[test]
fn log_file_in_a_place_that_cannot_hold_files_is_a_clear_error() {
    // Even root cannot create a file directly in /proc.
    let out = acplb(&[
        "--log-file".as_ref(),
        "/proc/acplb-test.log".as_ref(),
        "doctor".as_ref(),
    ]);
    assert_no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot open the log file `/proc/acplb-test.log`"),
        "{stderr}"
    );
}

#[test]
fn log_file_with_a_non_utf8_name_gets_the_logs() {
    // A non-UTF-8 name is a valid Linux file name: it is used as given, not refused.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(OsStr::from_bytes(b"acplb-\xff.log"));
    let out = acplb(&["--log-file".as_ref(), log.as_os_str()]);
    assert_no_panic(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).expect("the log file exists");
    assert!(text.contains("codex not found"), "{text}");
}

#[test]
fn stderr_through_a_pipe_has_no_colour_codes() {
    let out = acplb(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("codex not found"), "{stderr}");
    assert!(
        !out.stderr.contains(&0x1b),
        "escape codes on a piped stderr: {stderr:?}"
    );
}

/// A stand-in `codex` script; `cases` is the body of a `case "$1" in ... esac`.
fn fake_codex(dir: &Path, cases: &str) -> PathBuf {
    let path = dir.join("codex");
    std::fs::write(&path, format!("#!/bin/sh\ncase \"$1\" in\n{cases}\nesac\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const SANDBOX_OK: &str = "sandbox) echo sandbox-ok ;;";
const VERSION_OK: &str = "--version) echo codex-cli 9.9.9 ;;";

fn doctor(codex: &Path, extra_env: &[(&str, &str)]) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new(ACPLB)
        .args(["doctor", "--timeout", "1"])
        .env("ACPLB_CODEX", codex)
        .env_remove("CODEX_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_ACCESS_TOKEN")
        .envs(extra_env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, started.elapsed())
}

#[tokio::test]
async fn doctor_stops_a_hung_codex_and_says_which_call_hung() {
    let dir = tempfile::tempdir().unwrap();
    // The script waits on a child, as npm's wrapper does: the child must go too.
    let codex = fake_codex(dir.path(), "--version) sleep 60 & wait ;;");
    let marker = format!("ACPLB_HOSTILE_DOCTOR={}", std::process::id());
    let (name, value) = marker.split_once('=').unwrap();
    let (out, took) = doctor(&codex, &[(name, value)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(took < Duration::from_secs(15), "doctor took {took:?}");
    assert!(
        stdout.contains("version:  TIMED OUT") && stdout.contains("--version` gave no answer within 1 s"),
        "{stdout}"
    );
    assert!(
        eventually(Duration::from_secs(5), || processes_with_env(&marker).is_empty()).await,
        "the hung codex was left running"
    );
}

#[test]
fn doctor_stops_a_hung_login_check_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        &format!("{VERSION_OK}\nlogin) sleep 60 & wait ;;\n{SANDBOX_OK}"),
    );
    let (out, _) = doctor(&codex, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("login:    unknown: `codex login status` gave no answer within 1 s"),
        "{stdout}"
    );
    assert!(stdout.contains("sandbox:  ok"), "{stdout}");
}

#[test]
fn doctor_prints_codex_output_cleaned_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        r"--version) printf '\033[31mcodex-cli 9.9.9\033[0m\033]0;pwned\007\001\n'; head -c 100000 /dev/zero | tr '\0' x; echo ;;
login) echo 'Not logged in' >&2; exit 1 ;;
sandbox) printf '\033[2J\033[31mbwrap: boom\033[0m\r\n' >&2; head -c 50000 /dev/zero | tr '\0' y >&2; exit 1 ;;",
    );
    let (out, _) = doctor(&codex, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("version:  codex-cli 9.9.9\n"), "{stdout}");
    assert!(
        stdout.contains("sandbox:  FAILED") && stdout.contains("bwrap: boom"),
        "{stdout}"
    );
    assert!(
        !out.stdout.iter().any(|b| b.is_ascii_control() && *b != b'\n'),
        "control bytes in {stdout:?}"
    );
    assert!(stdout.lines().all(|l| l.chars().count() <= 500), "{stdout}");
    assert!(out.stdout.len() < 4000, "{} bytes", out.stdout.len());
}

#[test]
fn doctor_reports_login_without_showing_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        &format!("{VERSION_OK}\nlogin) echo 'API key configured - sk-test-***p1234' >&2 ;;\n{SANDBOX_OK}"),
    );
    let (out, _) = doctor(&codex, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("login:    logged in (an API key"), "{stdout}");
    assert!(!stdout.contains("p1234"), "{stdout}");

    let codex = fake_codex(
        dir.path(),
        &format!("{VERSION_OK}\nlogin) echo 'Not logged in' >&2; exit 1 ;;\n{SANDBOX_OK}"),
    );
    let (out, _) = doctor(&codex, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("login:    NOT LOGGED IN\n"), "{stdout}");
    assert!(stdout.contains("run `codex login`"), "{stdout}");

    let (out, _) = doctor(&codex, &[("OPENAI_API_KEY", "sk-not-to-be-shown-1234567890")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("API key is set in the environment (OPENAI_API_KEY)"),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-not-to-be-shown"), "{stdout}");
}

#[test]
fn doctor_points_at_the_codex_the_scripts_installed() {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(
        ".cache/acplb/codex-0.169.0/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin",
    );
    std::fs::create_dir_all(&bin).unwrap();
    let codex = fake_codex(&bin, VERSION_OK);
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(ACPLB)
        .arg("doctor")
        .env_remove("ACPLB_CODEX")
        .env_remove("ACPLB_CACHE")
        .env("HOME", home.path())
        .env("PATH", empty.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("codex:    NOT FOUND"), "{stdout}");
    assert!(
        stdout.contains(&format!("acplb --codex {}", codex.display()))
            && stdout.contains(&format!("ACPLB_CODEX={}", codex.display())),
        "{stdout}"
    );
}

#[test]
fn a_settings_file_with_a_typo_or_a_bad_transport_stops_acplb_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acplb/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let run = |text: &str| {
        std::fs::write(&file, text).unwrap();
        let out = Command::new(ACPLB)
            .env("XDG_CONFIG_HOME", dir.path())
            .env_remove("ACPLB_TRANSPORT")
            .env("ACPLB_CODEX", "/nope/codex")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_no_panic(&out);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run("transprot = \"exec\"\n");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml")
            && stderr.contains("line 1")
            && stderr.contains("unknown field `transprot`"),
        "{stderr}"
    );
    let (code, stderr) = run("transport = \"grpc\"\n");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown transport `grpc`; it is one of: app-server, exec"),
        "{stderr}"
    );
    // A good file: acplb serves (and ends at the end of its input).
    let (code, stderr) = run("transport = \"exec\"\n");
    assert_eq!(code, Some(0), "{stderr}");
}

#[tokio::test]
async fn an_empty_acplb_transport_names_no_transport() {
    let live = crate::live::Live::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("acplb/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let doctor = |settings: Option<&str>, value: &str| {
        match settings {
            Some(text) => std::fs::write(&file, text).unwrap(),
            None => std::fs::remove_file(&file).unwrap_or(()),
        }
        let out = Command::new(ACPLB)
            .arg("doctor")
            .envs(live.env.env_vars())
            .env("ACPLB_CODEX", live.env.codex_path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("ACPLB_TRANSPORT", value)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_no_panic(&out);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Empty (or blank): the settings file decides, else the default; never an error.
    let (_, stdout, _) = doctor(Some("transport = \"exec\"\n"), "");
    assert!(stdout.contains("transport: exec ("), "{stdout}");
    assert!(stdout.contains("config.toml"), "the file decided: {stdout}");
    let (_, stdout, _) = doctor(None, " ");
    assert!(
        stdout.contains("transport: app-server (from the default)"),
        "{stdout}"
    );
    // A value that names nothing known is still refused, saying what there is.
    let (code, _, stderr) = doctor(None, "grpc");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown transport `grpc`; it is one of: app-server, exec"),
        "{stderr}"
    );
}
