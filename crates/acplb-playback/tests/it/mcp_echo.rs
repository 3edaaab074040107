//! `playback mcp-echo` over real stdio.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::bins::PLAYBACK;

#[test]
fn echo_and_fail_tools() {
    let mut child = Command::new(PLAYBACK)
        .arg("mcp-echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{}}}"#,
    ];
    child
        .stdin
        .take()
        .unwrap()
        .write_all((requests.join("\n") + "\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let replies: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0]["result"]["serverInfo"]["name"], "playback-mcp-echo");
    assert_eq!(replies[1]["result"]["content"][0]["text"], "echo: ping");
    assert_eq!(replies[2]["result"]["isError"], true);
}
