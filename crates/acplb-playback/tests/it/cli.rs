//! The `playback mock-model` binary: its status line, a user script, a request log, and script errors.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{body_with, post_responses};

const PLAYBACK: &str = env!("CARGO_BIN_EXE_playback");

/// Kills the child if the test fails before it is reaped.
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ignored = self.0.kill();
        let _reaped = self.0.wait();
    }
}

#[test]
fn mock_model_serves_a_script_file_and_logs_requests() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.toml");
    std::fs::write(
        &script,
        "[[scenarios.greet.steps]]\nactions = [{ type = \"message\", text = \"hi from a file\" }]\n",
    )
    .unwrap();
    let log = dir.path().join("log.jsonl");
    let child = Command::new(PLAYBACK)
        .args(["mock-model", "--port", "0", "--lifetime", "60", "--delay-ms", "1"])
        .arg("--script")
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Reaper(child);
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("status line: {line:?}"));
    let port = url
        .strip_prefix("http://127.0.0.1:")
        .and_then(|r| r.strip_suffix("/v1"))
        .unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();

    let from_file = post_responses(addr, &body_with(&["scenario:greet"], &[])).sse_events();
    let text = from_file
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap()["item"]["content"][0]["text"]
        .clone();
    assert_eq!(text, "hi from a file");
    // The file is layered over the built-ins, which stay available.
    let builtin = post_responses(addr, &body_with(&["scenario:http401"], &[]));
    assert_eq!(builtin.status, 401);

    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scenarios: Vec<&Value> = logged.iter().map(|r| &r["scenario"]).collect();
    assert_eq!(scenarios, ["greet", "http401"]);
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.0.stdout.take().unwrap(), &mut stdout).unwrap();
    assert_eq!(stdout, "", "the binary never writes to stdout");
}

#[test]
fn mock_model_exits_after_its_lifetime() {
    let output = Command::new(PLAYBACK)
        .args(["mock-model", "--lifetime", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.starts_with("listening on http://127.0.0.1:"), "{stderr}");
}

#[test]
fn a_bad_script_is_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.toml");
    std::fs::write(
        &script,
        "[[scenarios.x.steps]]\nactions = [{ type = \"mesage\", text = \"typo\" }]\n",
    )
    .unwrap();
    let output = Command::new(PLAYBACK)
        .args(["mock-model", "--lifetime", "0", "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let expected = format!(
        "playback: invalid mock script `{}`: TOML parse error at line 2",
        script.display()
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(stderr.contains("unknown variant `mesage`"), "{stderr}");
}
