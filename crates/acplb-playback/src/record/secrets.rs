//! Keeping a client's MCP secrets out of a recording: every value of the `env` and `headers`
//! of the servers in a `session/new` is replaced by `[REDACTED]` in every line the scenario is
//! built from (both directions of the traffic and acplb's transcripts), so the recording stays
//! consistent with itself and replays as it was recorded.

use acplb_core::secrets::KnownSecrets;
use agent_client_protocol::v1::schema::McpServer;
use serde_json::Value;

use super::build::Captured;
use super::transcript::Transcripts;
use crate::scenario::EventKind;

/// The secrets the client handed over in its `session/new` requests.
pub(crate) fn known(captured: &[Captured]) -> KnownSecrets {
    let mut servers: Vec<McpServer> = Vec::new();
    for c in captured {
        let Captured::Client(line) = c else { continue };
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["method"] != "session/new" {
            continue;
        }
        let list = v.pointer("/params/mcpServers").and_then(Value::as_array);
        // Each server on its own: one malformed entry must not hide the others' secrets.
        servers.extend(
            list.into_iter()
                .flatten()
                .filter_map(|s| serde_json::from_value::<McpServer>(s.clone()).ok()),
        );
    }
    KnownSecrets::from_mcp_servers(&servers)
}

/// Replaces the known secrets in the traffic and the transcripts.
pub(crate) fn redact(captured: &mut [Captured], transcripts: &mut Transcripts) {
    let secrets = known(captured);
    if secrets.is_empty() {
        return;
    }
    for c in captured.iter_mut() {
        if let Captured::Client(line) | Captured::Agent(line) = c {
            *line = secrets.redact_known_json_line(line);
        }
    }
    let app_events = transcripts
        .servers
        .iter_mut()
        .flat_map(|s| &mut s.events)
        .chain(transcripts.turns.iter_mut().flat_map(|t| &mut t.events));
    for (_, kind) in app_events {
        match kind {
            EventKind::Sent(line) | EventKind::Recv(line) => *line = secrets.redact_known_json_line(line),
            EventKind::Stderr(line) => *line = secrets.redact_known(line).into_owned(),
            _ => {}
        }
    }
    for server in &mut transcripts.servers {
        for arg in &mut server.argv {
            *arg = secrets.redact_known(arg).into_owned();
        }
    }
    for run in &mut transcripts.runs {
        for arg in &mut run.argv {
            *arg = secrets.redact_known(arg).into_owned();
        }
        for (_, line, is_stdout) in &mut run.lines {
            *line = if *is_stdout {
                secrets.redact_known_json_line(line)
            } else {
                secrets.redact_known(line).into_owned()
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::scenario::End;

    #[test]
    fn session_new_secrets_are_replaced_everywhere() {
        let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"gh","command":"/bin/gh","args":[],"env":[{"name":"GITHUB_TOKEN","value":"tok-0123456789"}]},{"type":"http","name":"r","url":"http://x","headers":[{"name":"Authorization","value":"Bearer hdr-secret-42"}]}]}}"#;
        let mut captured = vec![
            Captured::Client(new.to_owned()),
            Captured::Agent(
                r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"text":"tok-0123456789"}}}"#
                    .to_owned(),
            ),
        ];
        let mut transcripts = Transcripts {
            runs: vec![super::super::transcript::TranscriptRun {
                session_dir: "s".into(),
                turn: 1,
                argv: vec!["exec".into()],
                stdin_bytes: 1,
                lines: vec![
                    (1, r#"{"type":"x","text":"Bearer hdr-secret-42"}"#.into(), true),
                    (2, "stderr tok-0123456789".into(), false),
                ],
                end: End::Exit(0),
                created: SystemTime::UNIX_EPOCH,
            }],
            ..Transcripts::default()
        };
        transcripts.turns.push(super::super::transcript::AppTurnTranscript {
            session_dir: "s".into(),
            turn: 1,
            server: 1,
            events: vec![(
                1,
                EventKind::Sent(
                    r#"{"method":"thread/start","params":{"config":{"mcp_servers.gh":{"env":{"GITHUB_TOKEN":"tok-0123456789"}}}}}"#
                        .into(),
                ),
            )],
            created: SystemTime::UNIX_EPOCH,
        });
        redact(&mut captured, &mut transcripts);
        let all = format!("{captured:?} {transcripts:?}");
        let runs = &transcripts.runs;
        assert!(
            !all.contains("tok-0123456789") && !all.contains("hdr-secret-42"),
            "{all}"
        );
        let Captured::Client(line) = &captured[0] else {
            panic!()
        };
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["params"]["mcpServers"][0]["env"][0]["value"], "[REDACTED]");
        assert_eq!(v["params"]["mcpServers"][0]["env"][0]["name"], "GITHUB_TOKEN");
        assert_eq!(runs[0].lines[1].1, "stderr [REDACTED]");
        let EventKind::Sent(sent) = &transcripts.turns[0].events[0].1 else {
            panic!()
        };
        assert!(sent.contains(r#""GITHUB_TOKEN":"[REDACTED]""#), "{sent}");
    }
}
