//! `playback record` end to end: a live session through the real Codex (via `record-corpus`),
//! and a client that only initializes, each replayed afterwards by `check`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};

use acplb_playback::mock_model::codex_env::codex_binary;
use acplb_playback::scenario::{Action, After, Scenario};

use crate::bins::{PLAYBACK, acplb, playback, text};

/// The state directory the recorded acplb keeps its sessions in: `state` beside `out`, never
/// the user's (a recording runs acplb with the user's environment, as the user would).
fn state_beside(out: &std::path::Path) -> std::path::PathBuf {
    out.with_file_name("state")
}

/// `playback record -o out -- acplb` with every pipe held by the test, acplb's sessions kept
/// in [`state_beside`] `out`.
fn recorder(out: &std::path::Path) -> std::process::Child {
    Command::new(PLAYBACK)
        .args(["record", "-o"])
        .arg(out)
        .arg("--")
        .arg(acplb())
        .env("RUST_LOG", "error")
        .env("ACPLB_STATE_DIR", state_beside(out))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_live_recording_through_real_codex_replays_identically() {
    let codex = codex_binary().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(PLAYBACK)
        .args([
            "record-corpus",
            "--only",
            "shell",
            "--only",
            "patch-add-update",
            "--only",
            "as-plain",
            "--out",
        ])
        .arg(dir.path())
        .arg("--acplb")
        .arg(acplb())
        .arg("--codex")
        .arg(&codex)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let shell = Scenario::load(&dir.path().join("shell.toml")).unwrap();
    assert_eq!(shell.codex.len(), 1);
    assert!(
        shell.expect.iter().any(|l| l.contains(r#""title":"ls -la""#)),
        "{:?}",
        shell.expect
    );
    let patch = Scenario::load(&dir.path().join("patch-add-update.toml")).unwrap();
    assert_eq!(
        patch.workspace.files.get("README.md").map(String::as_str),
        Some("# demo repo\n")
    );
    let app = Scenario::load(&dir.path().join("as-plain.toml")).unwrap();
    assert_eq!(app.transport, acplb_playback::scenario::Transport::AppServer);
    assert_eq!(app.app_servers.len(), 1);
    assert_eq!(app.app_servers[0].turns.len(), 1);
    let check = playback(&["check", dir.path().to_str().unwrap()]);
    assert!(check.status.success(), "{:?}", text(&check));
    assert!(
        text(&check).0.contains("3 passed, 0 failed"),
        "{:?}",
        text(&check)
    );
}

#[test]
fn record_passes_bytes_through_and_writes_on_disconnect() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("init.toml");
    let mut child = Command::new(PLAYBACK)
        .args(["record", "--description", "initialize only", "-o"])
        .arg(&out)
        .arg("--")
        .arg(acplb())
        .env("RUST_LOG", "error")
        .env("ACPLB_STATE_DIR", state_beside(&out))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = r#"{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":1}}"#;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{request}\n").as_bytes()).unwrap();
    // Bytes pass through at once: the answer arrives while the client is still connected.
    let mut stdout = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut stdout)
        .unwrap();
    assert!(
        stdout.starts_with(r#"{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":1"#),
        "{stdout}"
    );
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", text(&output));

    let scenario = Scenario::load(&out).unwrap();
    assert_eq!(scenario.name, "init");
    assert_eq!(scenario.description, "initialize only");
    assert_eq!(scenario.client[0].action, Action::Send(request.to_owned()));
    // The client disconnected once the answer came back.
    assert_eq!(scenario.client.len(), 2);
    assert_eq!(
        scenario.client[1].after,
        Some(After::Response(serde_json::json!("a")))
    );
    assert_eq!(scenario.client[1].action, Action::Close);
    assert_eq!(scenario.expect.len(), 2, "{:?}", scenario.expect);
    assert_eq!(scenario.expect[0], stdout.trim_end());
    let check = playback(&["check", out.to_str().unwrap()]);
    assert!(check.status.success(), "{:?}", text(&check));
}

#[test]
fn a_terminated_recorder_still_writes_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("term.toml");
    let mut child = recorder(&out);
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
        )
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let scenario = Scenario::load(&out).unwrap();
    assert_eq!(scenario.client.last().unwrap().action, Action::Close);
    assert_eq!(scenario.expect.last().unwrap(), r#"{"acplb_exit":{"code":0}}"#);
    drop(stdin);
}

#[test]
fn a_recording_keeps_mcp_secrets_out_and_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("secret.toml");
    let mut child = recorder(&out);
    let secret = "ghp-recorded-secret-0123456789";
    let new = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "session/new",
        "params": { "cwd": dir.path(), "mcpServers": [
            { "name": "gh", "command": "/bin/true", "args": [],
              "env": [{ "name": "GITHUB_TOKEN", "value": secret }] }
        ]}
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for request in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#.to_owned(),
        new.to_string(),
    ] {
        stdin.write_all(format!("{request}\n").as_bytes()).unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("\"result\""), "{line}");
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(!written.contains(secret), "{written}");
    assert!(
        written.contains("GITHUB_TOKEN") && written.contains("[REDACTED]"),
        "{written}"
    );
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // The session acplb kept is in the test's state directory, and holds no secret either.
    let state = state_beside(&out);
    let mut kept = Vec::new();
    let mut dirs = vec![state.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                kept.push(path);
            }
        }
    }
    assert!(
        kept.iter().any(|p| p.ends_with("journal.jsonl")),
        "no session kept in {}: {kept:?}",
        state.display()
    );
    for file in &kept {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            file.display()
        );
    }
}
