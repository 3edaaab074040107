//! The scripted client against a fake agent on an in-memory duplex.

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

use super::*;

fn send(text: &str, after: Option<After>) -> Step {
    Step {
        after,
        action: Action::Send(text.to_owned()),
        line: 7,
    }
}

fn subst() -> Substitutions {
    Substitutions {
        cwd: "/w/a \"b\"".into(),
        playback: "/bin/pb".into(),
    }
}

/// A fake agent: answers `session/new` with a session id, a prompt with a tool call, a
/// permission request (whose answer it records) and a response.
async fn fake_agent(io: tokio::io::DuplexStream) -> Vec<String> {
    let (r, mut w) = tokio::io::split(io);
    let mut lines = BufReader::new(r).lines();
    let mut got = Vec::new();
    while let Ok(Some(line)) = lines.next_line().await {
        got.push(line.clone());
        let v: Value = serde_json::from_str(&line).unwrap();
        let reply = match v["method"].as_str() {
            Some("session/new") => vec![json!({"jsonrpc":"2.0","id":v["id"],"result":{"sessionId":"S-1"}})],
            Some("session/prompt") => vec![
                json!({"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"tool_call","title":"sleep 30"}}}),
                json!({"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{}}),
            ],
            Some("session/cancel") => {
                vec![json!({"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}})]
            }
            _ => vec![],
        };
        for r in reply {
            w.write_all(format!("{r}\n").as_bytes()).await.unwrap();
        }
    }
    got
}

#[tokio::test]
async fn steps_wait_substitute_and_answer() {
    let (client_io, agent_io) = tokio::io::duplex(4096);
    let agent = tokio::spawn(fake_agent(agent_io));
    let (r, w) = tokio::io::split(client_io);
    let steps = vec![
        send(
            r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"<cwd>","cmd":"<playback>"}}"#,
            None,
        ),
        send(
            r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"<session-1>"}}"#,
            Some(After::Response(json!(1))),
        ),
        send(
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"<session-1>"}}"#,
            Some(After::ToolCall("sleep 30".into())),
        ),
        Step {
            after: Some(After::Response(json!(2))),
            action: Action::Close,
            line: 9,
        },
    ];
    let answers = vec![Answer {
        method: "session/request_permission".into(),
        reply: Reply::Result(r#"{"outcome":"x"}"#.into()),
        line: 3,
    }];
    let run = drive(&steps, &answers, &subst(), w, r, Duration::from_secs(5)).await;
    assert_eq!(run.error, None);
    assert_eq!(run.sessions, ["S-1"]);
    assert_eq!(run.received.len(), 4);
    let sent = agent.await.unwrap();
    assert_eq!(
        sent[0],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w/a \"b\"","cmd":"/bin/pb"}}"#
    );
    assert!(sent[1].contains(r#""sessionId":"S-1""#), "{}", sent[1]);
    // The cancel goes out as soon as the tool call is seen, before the permission request is read.
    assert!(sent[2].contains("session/cancel"), "{}", sent[2]);
    assert_eq!(
        sent[3],
        r#"{"jsonrpc":"2.0","id":"perm-1","result":{"outcome":"x"}}"#
    );
}

#[tokio::test]
async fn a_wait_that_never_ends_names_the_step() {
    let (client_io, agent_io) = tokio::io::duplex(4096);
    let _agent = tokio::spawn(fake_agent(agent_io));
    let (r, w) = tokio::io::split(client_io);
    let steps = vec![
        send(r#"{"jsonrpc":"2.0","id":5,"method":"nothing"}"#, None),
        send(
            r#"{"jsonrpc":"2.0","id":6,"method":"nothing"}"#,
            Some(After::Response(json!(5))),
        ),
    ];
    let run = drive(&steps, &[], &subst(), w, r, Duration::from_millis(100)).await;
    let error = run.error.unwrap();
    assert!(
        error.starts_with("client step 2 (line 7): no message from acplb within"),
        "{error}"
    );
    assert!(
        error.ends_with("while waiting for the response to request 5"),
        "{error}"
    );
}

#[tokio::test]
async fn an_unknown_session_placeholder_is_an_error() {
    let (client_io, agent_io) = tokio::io::duplex(4096);
    let _agent = tokio::spawn(fake_agent(agent_io));
    let (r, w) = tokio::io::split(client_io);
    let steps = vec![send(
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"<session-2>"}}"#,
        None,
    )];
    let run = drive(&steps, &[], &subst(), w, r, Duration::from_secs(1)).await;
    let error = run.error.unwrap();
    assert!(
        error.contains("`<session-2>` is used but acplb created 0 session(s) so far"),
        "{error}"
    );
}

#[tokio::test]
async fn an_agent_request_without_answer_gets_an_error_reply() {
    let (client_io, agent_io) = tokio::io::duplex(4096);
    let agent = tokio::spawn(fake_agent(agent_io));
    let (r, w) = tokio::io::split(client_io);
    let steps = vec![
        send(r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt"}"#, None),
        send(
            r#"{"jsonrpc":"2.0","method":"session/cancel"}"#,
            Some(After::Messages(2)),
        ),
    ];
    let run = drive(&steps, &[], &subst(), w, r, Duration::from_secs(5)).await;
    assert_eq!(run.error, None, "the script ends once request 2 is answered");
    let sent = agent.await.unwrap();
    assert!(
        sent[1].contains("the scenario has no answer for `session/request_permission`"),
        "{}",
        sent[1]
    );
}

#[test]
fn permission_options_are_picked_by_kind() {
    let request = json!({"params": {"options": [
        {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
        {"optionId": "always", "name": "Always allow this command", "kind": "allow_always"},
        {"optionId": "allow-session", "name": "Allow for this session", "kind": "allow_always"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ]}});
    assert_eq!(pick_option(&request, Pick::AllowOnce).as_deref(), Some("allow"));
    assert_eq!(
        pick_option(&request, Pick::AllowSession).as_deref(),
        Some("allow-session")
    );
    assert_eq!(pick_option(&request, Pick::Reject).as_deref(), Some("reject"));
    let no_session = json!({"params": {"options": [
        {"optionId": "a", "name": "Always", "kind": "allow_always"},
        {"optionId": "r", "name": "No", "kind": "reject_always"},
    ]}});
    assert_eq!(pick_option(&no_session, Pick::AllowSession).as_deref(), Some("a"));
    assert_eq!(pick_option(&no_session, Pick::Reject).as_deref(), Some("r"));
    assert_eq!(pick_option(&no_session, Pick::AllowOnce), None);
}
