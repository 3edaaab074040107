//! `acplb mcp codex` against a hostile or unlucky MCP client: junk on its stdin, tool calls
//! with arguments of every wrong shape, a client that hangs up or is signalled mid-turn. The
//! server answers what it can with a clear error, keeps serving, and leaves nothing running.

use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use crate::harness::{codex_work_left, eventually};
use crate::live::Live;

/// A raw JSON-RPC line client, so the test can also send what no MCP library would.
struct Raw {
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Raw {
    async fn open(live: &mut Live) -> Raw {
        let mut raw = Raw {
            stdin: live.acplb.child.stdin.take().unwrap(),
            lines: BufReader::new(live.acplb.child.stdout.take().unwrap()).lines(),
        };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}});
        raw.request(0, "initialize", init).await;
        raw.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
        raw
    }

    async fn line(&mut self, text: &str) {
        self.stdin.write_all(text.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its answer (notifications in between are skipped).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.line(&req.to_string()).await;
        self.answer(id).await
    }

    async fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .expect("an answer within 60 s")
                .unwrap()
                .expect("acplb closed its stdout");
            let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    async fn call(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": tool, "arguments": args}))
            .await
    }
}

fn error_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn junk_on_stdin_and_arguments_of_every_wrong_shape_never_stop_the_server() {
    let mut live = Live::start_with(MockConfig::default(), &["mcp", "codex"], &[]);
    let mut raw = Raw::open(&mut live).await;
    raw.line("this is not json").await;
    raw.line("{\"jsonrpc\":\"2.0\",\"id\":").await;
    raw.line(&"x".repeat(100_000)).await;
    let wrong_shapes = [
        json!({"prompt": ["a", "list"]}),
        json!({"prompt": {"an": "object"}}),
        json!({"prompt": null}),
        json!({"prompt": "   "}),
        json!({"prompt": "x", "cwd": 7}),
        json!({"prompt": "x", "cwd": ""}),
        json!({"prompt": "x", "cwd": "/etc/hostname"}),
        json!({"prompt": "x", "include-plan-tool": "yes"}),
        json!({"prompt": "x", "config": {"model": 5}}),
        json!({"prompt": "x", "approval-policy": "always"}),
        json!({"prompt": "x", "base-instructions": 5}),
        // Config keys that would add a second override, carry a secret, or say nothing.
        json!({"prompt": "x", "config": {"model=\"x\"\nsandbox_mode": "y"}}),
        json!({"prompt": "x", "config": {"a b": 1}}),
        json!({"prompt": "x", "config": {"mcp_servers.evil.env.TOKEN": "s3cr3t-value"}}),
        json!({"prompt": "x", "config": {"model_providers.p.experimental_bearer_token": "s3cr3t-value"}}),
        json!({"prompt": "x", "config": {"x": null}}),
    ];
    for (i, args) in wrong_shapes.iter().enumerate() {
        let answer = raw.call(10 + i as u64, "codex", args.clone()).await;
        let text = error_text(&answer);
        assert!(text.starts_with("codex: "), "{args}: {text}");
    }
    // Arguments that are not an object at all, and a reply to threads that cannot exist.
    let not_object = raw
        .request(30, "tools/call", json!({"name": "codex", "arguments": "prompt"}))
        .await;
    assert!(
        not_object.get("error").is_some() || not_object["result"]["isError"] == true,
        "{not_object}"
    );
    for thread in ["", "x/../../y", "\u{0}", &"a".repeat(5000)] {
        let answer = raw
            .call(31, "codex-reply", json!({"prompt": "x", "threadId": thread}))
            .await;
        let text = error_text(&answer);
        assert!(text.contains("codex-reply: "), "{text}");
    }
    // Still serving: a real turn.
    let ok = raw.call(40, "codex", json!({"prompt": "hello"})).await;
    assert_eq!(
        ok["result"]["content"][0]["text"], "Hello from the mock model.",
        "{ok}"
    );
    assert_eq!(
        ok["result"]["structuredContent"]["content"],
        "Hello from the mock model."
    );
    drop(raw);
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    assert!(
        !live.acplb.stderr().contains("s3cr3t-value"),
        "a refused secret is not logged"
    );
}

/// A server whose call runs `sleep 30` now; its client, and the test's Codex marker.
async fn sleeping() -> (Live, Raw, String) {
    let mut live = Live::start_with(MockConfig::default(), &["mcp", "codex"], &[]);
    let mut raw = Raw::open(&mut live).await;
    let req = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "codex", "arguments": {"prompt": "scenario:sleep now"}}});
    raw.line(&req.to_string()).await;
    let marker = live.codex_marker();
    assert!(
        crate::harness::eventually(Duration::from_secs(30), || {
            crate::harness::processes_with_env(&marker)
                .into_iter()
                .any(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep")))
        })
        .await,
        "sleep never started"
    );
    (live, raw, marker)
}

#[tokio::test]
async fn a_client_that_hangs_up_mid_turn_leaves_no_process() {
    let (mut live, raw, marker) = sleeping().await;
    drop(raw);
    live.acplb.wait_exit(Duration::from_secs(20)).await;
    let left = codex_work_left(&marker, live.acplb.pid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "left behind: {:?}", live.codex_left());
    assert!(
        crate::harness::processes_with_env(&marker).is_empty(),
        "{:?}",
        live.codex_left()
    );
}

#[tokio::test]
async fn sigterm_mid_turn_stops_the_server_and_leaves_no_process() {
    let (mut live, _raw, marker) = sleeping().await;
    kill(Pid::from_raw(live.acplb.pid as i32), Signal::SIGTERM).unwrap();
    let (_, took) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(
        crate::harness::processes_with_env(&marker).is_empty(),
        "{:?}",
        live.codex_left()
    );
}

#[tokio::test]
async fn resume_of_a_thread_that_is_not_there_stops_at_start_with_its_name() {
    let mut live = Live::start_with(
        MockConfig::default(),
        &["mcp", "codex", "--resume", "../not-a-thread"],
        &[],
    );
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(2));
    // The test reads acplb's stderr on a task of its own: wait for it to have the last line.
    let wanted = "--resume: unknown thread `../not-a-thread`";
    assert!(
        eventually(Duration::from_secs(5), || live.acplb.stderr().contains(wanted)).await,
        "{}",
        live.acplb.stderr()
    );
    // And with nothing kept at all, a bare `--resume` says there is nothing to continue.
    let mut live = Live::start_with(MockConfig::default(), &["mcp", "codex", "--resume"], &[]);
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(2));
    assert!(
        eventually(Duration::from_secs(5), || live
            .acplb
            .stderr()
            .contains("no thread to continue"))
        .await,
        "{}",
        live.acplb.stderr()
    );
}

#[tokio::test]
async fn a_role_that_is_not_there_stops_at_start_naming_the_roles_there_are() {
    let (_dir, env) = crate::mcp_codex::roles::config_home();
    let mut live = Live::start_with(MockConfig::default(), &["--role", "nobody", "mcp", "codex"], &env);
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(2));
    let wanted = "--role nobody";
    assert!(
        eventually(Duration::from_secs(5), || {
            let e = live.acplb.stderr();
            e.contains(wanted) && e.contains("its roles are other, quick")
        })
        .await,
        "{}",
        live.acplb.stderr()
    );
}

#[tokio::test]
async fn an_identity_that_is_no_name_stops_at_start_naming_it() {
    let team = crate::atm::Team::new(crate::atm::TEAM_PLUGINS);
    let composer = team.composer();
    let mut live = Live::start_with(
        MockConfig::default(),
        &["--composer", &composer, "mcp", "codex", "--identity", "../../etc"],
        &team.env(),
    );
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_ne!(code, Some(0));
    assert!(
        eventually(Duration::from_secs(5), || live
            .acplb
            .stderr()
            .contains("--identity `../../etc`"))
        .await,
        "{}",
        live.acplb.stderr()
    );
    assert!(!team.home().join("etc.lock").exists());
}

/// A form of a field kind MCP forms do not have (a nested object): declined, not sent, and the
/// call still ends with its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_the_mcp_client_cannot_take_is_declined_and_the_call_ends() {
    let nested = r#"{"type":"object","properties":{"where":{"type":"object","properties":{}}}}"#;
    let (dir, _, asked) =
        crate::mcp_codex::forms::call_with_schema(Some(crate::mcp_codex::client::Elicit::FillTable), nested)
            .await;
    assert!(asked.is_empty(), "{asked:?}");
    let form = crate::mcp_codex::forms::answered(dir.path());
    assert_eq!(form["result"]["action"], "decline", "{form}");
}
