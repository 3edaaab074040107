//! Building a scenario from captured traffic: wait conditions, answers, placeholders, runs.

use serde_json::json;

use super::*;
use crate::scenario::End;

const CWD: &str = "/tmp/rec-abc/repo";

fn client(v: &serde_json::Value) -> Captured {
    Captured::Client(v.to_string())
}

fn agent(v: &serde_json::Value) -> Captured {
    Captured::Agent(v.to_string())
}

fn transcript() -> TranscriptRun {
    TranscriptRun {
        session_dir: "sess-1".into(),
        turn: 1,
        argv: ["exec", "-C", CWD, "resume", "0199-thread", "--", "-"]
            .map(str::to_owned)
            .to_vec(),
        stdin_bytes: 5,
        lines: vec![
            (3, "WARNING: home is /tmp/rec-abc/home".into(), false),
            (
                10,
                r#"{"type":"thread.started","thread_id":"0199-thread"}"#.into(),
                true,
            ),
            (
                20,
                format!(
                    r#"{{"type":"item.completed","item":{{"id":"item_0","type":"file_change","changes":[{{"path":"{CWD}/a.txt","kind":"update"}}],"status":"completed"}}}}"#
                ),
                true,
            ),
        ],
        end: End::Cancelled,
        created: std::time::SystemTime::UNIX_EPOCH,
    }
}

fn recording() -> Vec<Captured> {
    vec![
        client(&json!({"jsonrpc":"2.0","id":0,"method":"initialize"})),
        agent(&json!({"jsonrpc":"2.0","id":0,"result":{}})),
        client(
            &json!({"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":CWD,"mcpServers":[{"command":"/bin/pb"}]}}),
        ),
        agent(&json!({"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess-1"}})),
        client(&json!({"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess-1"}})),
        agent(
            &json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call","toolCallId":"t1-item_0","title":"Edit a.txt"}}}),
        ),
        client(&json!({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess-1"}})),
        agent(&json!({"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{}})),
        client(&json!({"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}})),
        agent(
            &json!({"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1-item_0",
            "content":[{"type":"diff","path":format!("{CWD}/a.txt"),"oldText":"old\n","newText":"new\n"}]}}}),
        ),
        agent(&json!({"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}})),
        Captured::ClientClosed,
    ]
}

fn build() -> Scenario {
    scenario(&Recording {
        name: "n".into(),
        description: "d".into(),
        args: ["--codex", "/x/codex", "-c", "a=b", "--transcript-dir=/t"]
            .map(str::to_owned)
            .to_vec(),
        captured: recording(),
        exit: None,
        transcripts: Transcripts {
            runs: vec![transcript()],
            ..Transcripts::default()
        },
        transport: Transport::Exec,
        playback: Path::new("/bin/pb"),
    })
}

#[test]
fn client_steps_wait_for_what_came_before_them() {
    let s = build();
    let afters: Vec<Option<After>> = s.client.iter().map(|c| c.after.clone()).collect();
    assert_eq!(
        afters,
        [
            None,
            Some(After::Response(json!(0))),
            Some(After::Response(json!(1))),
            Some(After::ToolCall("Edit a.txt".into())),
            Some(After::Response(json!(2))),
        ]
    );
    assert_eq!(s.client[4].action, Action::Close);
    let Action::Send(new) = &s.client[1].action else {
        panic!()
    };
    assert_eq!(
        new,
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"<cwd>","mcpServers":[{"command":"<playback>"}]}}"#
    );
    let Action::Send(cancel) = &s.client[3].action else {
        panic!()
    };
    assert!(cancel.contains(r#""sessionId":"<session-1>""#), "{cancel}");
    assert_eq!(s.answers.len(), 1);
    assert_eq!(s.answers[0].method, "session/request_permission");
    assert_eq!(
        s.answers[0].reply,
        Reply::Result(r#"{"outcome":{"outcome":"cancelled"}}"#.into())
    );
    assert_eq!(s.acplb_args, ["-c", "a=b"]);
}

#[test]
fn provider_side_keeps_thread_ids_and_gets_file_changes() {
    let s = build();
    assert_eq!(s.workspace.files.get("a.txt").map(String::as_str), Some("old\n"));
    let run = &s.codex[0];
    assert_eq!(run.session, "<session-1>");
    assert_eq!(run.end, End::Cancelled);
    let kinds: Vec<&EventKind> = run.events.iter().map(|e| &e.kind).collect();
    assert_eq!(kinds[0], &EventKind::Stderr("WARNING: home is <tmp>/home".into()));
    assert_eq!(
        kinds[1],
        &EventKind::Stdout(r#"{"type":"thread.started","thread_id":"0199-thread"}"#.into())
    );
    assert_eq!(
        kinds[2],
        &EventKind::Write {
            path: "a.txt".into(),
            text: "new\n".into()
        }
    );
    let EventKind::Stdout(line) = kinds[3] else {
        panic!()
    };
    assert!(line.contains(r#""path":"<cwd>/a.txt""#), "{line}");
}

#[test]
fn expected_output_is_normalized() {
    let s = build();
    assert_eq!(s.expect.len(), 8);
    assert_eq!(
        s.expect[2],
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<session-1>","update":{"sessionUpdate":"tool_call","toolCallId":"<tool-1>","title":"Edit a.txt"}}}"#
    );
    assert!(
        s.expect[4].contains(r#""toolCallId":"<tool-1>""#),
        "{}",
        s.expect[4]
    );
    assert_eq!(
        s.expect[6],
        r#"{"codex":1,"argv":["exec","-C","<cwd>","resume","<thread-1>","--","-"],"stdin_bytes":5}"#
    );
    assert_eq!(s.expect[7], r#"{"acplb_exit":"killed by playback (timeout)"}"#);
}
