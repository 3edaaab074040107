//! The npm launcher run as npm lays it out: `acplb` and this platform's package side by side in
//! `node_modules`, the platform package's binary being the acplb this test suite built.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::{eval_json, packaging};

/// A `node_modules` folder holding the launcher package and, with `with_binary`, this
/// platform's package; returns it and the launcher script.
fn installed(with_binary: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let modules = dir.path().join("node_modules");
    let launcher = modules.join("acplb/bin/acplb.js");
    std::fs::create_dir_all(launcher.parent().unwrap()).unwrap();
    std::fs::write(
        modules.join("acplb/package.json"),
        r#"{"name":"acplb","version":"0.0.0"}"#,
    )
    .unwrap();
    std::fs::copy(packaging().join("npm/acplb/bin/acplb.js"), &launcher).unwrap();
    if with_binary {
        let name = eval_json("launcher.platformPackage(process.platform, process.arch)");
        let platform = modules.join(
            name.as_str()
                .expect("a platform package for the machine running the tests"),
        );
        std::fs::create_dir_all(platform.join("bin")).unwrap();
        std::fs::write(
            platform.join("package.json"),
            r#"{"name":"platform","version":"0.0.0"}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_acplb"), platform.join("bin/acplb")).unwrap();
    }
    (dir, launcher)
}

/// `node LAUNCHER args`, with an acplb that can find no Codex and keeps its state in `dir`.
fn launch(dir: &Path, launcher: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("node");
    cmd.arg(launcher)
        .args(args)
        .env("ACPLB_CODEX", dir.join("no-codex"))
        .env("ACPLB_STATE_DIR", dir.join("state"));
    cmd
}

#[test]
fn the_launcher_runs_the_platform_binary_with_its_arguments_and_exit_code() {
    let (dir, launcher) = installed(true);
    let out = launch(dir.path(), &launcher, &["--version"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("acplb {}\n", env!("CARGO_PKG_VERSION"))
    );
    let direct = Command::new(env!("CARGO_BIN_EXE_acplb"))
        .arg("--no-such-flag")
        .output()
        .unwrap();
    let through_npm = launch(dir.path(), &launcher, &["--no-such-flag"])
        .output()
        .unwrap();
    assert_ne!(direct.status.code(), Some(0));
    assert_eq!(through_npm.status.code(), direct.status.code());
    assert_eq!(through_npm.stderr, direct.stderr, "acplb's own error, untouched");
}

#[test]
fn through_the_launcher_acplb_serves_acp_on_stdio_and_stops_on_sigterm() {
    let (dir, launcher) = installed(true);
    let mut child = launch(dir.path(), &launcher, &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        )
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["agentInfo"]["name"], "acplb", "{reply}");

    // SIGTERM to the launcher (what an editor sends) reaches acplb, which stops cleanly; the
    // launcher ends as acplb ended. Stdin stays open, so only the signal can stop it.
    kill(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGTERM).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = String::new();
        // End of output: every holder of the pipe, acplb included, is gone.
        stdout.read_to_string(&mut rest).ok();
        tx.send(rest).ok();
    });
    let rest = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("acplb still holds stdout 20 s after SIGTERM to the launcher");
    assert!(rest.is_empty(), "nothing after the reply: {rest}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    drop(stdin);
}

#[test]
fn without_its_platform_package_the_launcher_says_how_to_install_it() {
    let (dir, launcher) = installed(false);
    let out = launch(dir.path(), &launcher, &["--version"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("acplb: the package acplb-"), "{stderr}");
    assert!(
        stderr.contains("is not installed") && stderr.contains("--omit=optional"),
        "{stderr}"
    );
}
