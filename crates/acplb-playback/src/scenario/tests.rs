//! Scenario files: writing and reading back, and every validation error naming its line.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn sample() -> Scenario {
    Scenario {
        name: "sample".into(),
        description: "it's a \"test\"".into(),
        acplb_args: vec!["-c".into(), "model=\"gpt-5.5\"".into()],
        transport: Transport::Exec,
        codex_model: Some("gpt-5.5".into()),
        workspace: Workspace {
            git: true,
            files: BTreeMap::from([
                ("README.md".into(), "# demo repo\n".into()),
                ("src/odd name.txt".into(), "ends with a quote'".into()),
                ("tabs.txt".into(), "a\tb\r\nc\u{7f}".into()),
            ]),
        },
        client: vec![
            Step {
                after: None,
                action: Action::Send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#.into()),
                line: 0,
            },
            Step {
                after: Some(After::Response(json!(0))),
                action: Action::Send(
                    r#"{"jsonrpc":"2.0","id":"x","method":"m","params":{"t":"I'll"}}"#.into(),
                ),
                line: 0,
            },
            Step {
                after: Some(After::ToolCall("sleep 30".into())),
                action: Action::Send(r#"{"jsonrpc":"2.0","method":"session/cancel"}"#.into()),
                line: 0,
            },
            Step {
                after: Some(After::Response(json!("x"))),
                action: Action::Close,
                line: 0,
            },
            Step {
                after: Some(After::Messages(7)),
                action: Action::Close,
                line: 0,
            },
        ],
        answers: vec![Answer {
            method: "session/request_permission".into(),
            reply: Reply::Result(r#"{"outcome":{"outcome":"cancelled"}}"#.into()),
            line: 0,
        }],
        app_servers: Vec::new(),
        codex: vec![ProviderRun {
            session: "<session-1>".into(),
            turn: 1,
            events: vec![
                ProviderEvent {
                    t_ms: 0,
                    kind: EventKind::Stderr("WARNING: \"quoted\" and 'single' and '''triple'''".into()),
                    line: 0,
                },
                ProviderEvent {
                    t_ms: 5,
                    kind: EventKind::Stdout(
                        r#"{"type":"item.completed","item":{"text":"a\nb 'q' ends'"}}"#.into(),
                    ),
                    line: 0,
                },
                ProviderEvent {
                    t_ms: 6,
                    kind: EventKind::Stdout("'starts with a quote".into()),
                    line: 0,
                },
                ProviderEvent {
                    t_ms: 7,
                    kind: EventKind::Write {
                        path: "hello.txt".into(),
                        text: "hi\n".into(),
                    },
                    line: 0,
                },
                ProviderEvent {
                    t_ms: 8,
                    kind: EventKind::Delete {
                        path: "main.py".into(),
                    },
                    line: 0,
                },
            ],
            end: End::Signal(9),
            line: 0,
        }],
        expect: vec!["{\"a\":\"ü ☃ \\u0000\"}".into(), "it's".into(), String::new()],
        source: None,
    }
}

/// Line numbers and the source are not part of the content.
fn strip(mut s: Scenario) -> Scenario {
    s.source = None;
    s.client.iter_mut().for_each(|x| x.line = 0);
    s.answers.iter_mut().for_each(|x| x.line = 0);
    for run in &mut s.codex {
        run.line = 0;
        run.events.iter_mut().for_each(|e| e.line = 0);
    }
    for server in &mut s.app_servers {
        server.line = 0;
        server.events.iter_mut().for_each(|e| e.line = 0);
        for turn in &mut server.turns {
            turn.line = 0;
            turn.events.iter_mut().for_each(|e| e.line = 0);
        }
    }
    s
}

fn event(t_ms: u64, kind: EventKind) -> ProviderEvent {
    ProviderEvent { t_ms, kind, line: 0 }
}

/// A scenario recorded on app-server: processes, turns, the newer waits and answers.
fn app_sample() -> Scenario {
    let mut s = sample();
    s.codex.clear();
    s.transport = Transport::AppServer;
    s.client.push(Step {
        after: Some(After::Request {
            method: "session/request_permission".into(),
            count: 2,
        }),
        action: Action::Close,
        line: 0,
    });
    s.client.push(Step {
        after: Some(After::Text("it's \"done\"".into())),
        action: Action::Close,
        line: 0,
    });
    s.answers.push(Answer {
        method: "session/request_permission".into(),
        reply: Reply::Never,
        line: 0,
    });
    let turn = |session: &str, n| AppTurn {
        session: session.into(),
        turn: n,
        events: vec![
            event(
                1,
                EventKind::Sent(r#"{"method":"turn/start","params":{"threadId":"t"}}"#.into()),
            ),
            event(
                2,
                EventKind::Recv(
                    r#"{"id":0,"method":"item/fileChange/requestApproval","params":{"t":"I'll"}}"#.into(),
                ),
            ),
            event(
                3,
                EventKind::Sent(r#"{"id":0,"result":{"decision":"accept"}}"#.into()),
            ),
            event(
                4,
                EventKind::Write {
                    path: "a.txt".into(),
                    text: "x\n".into(),
                },
            ),
            event(5, EventKind::Recv(r#"{"gone":{"status":"signal: 9"}}"#.into())),
        ],
        line: 0,
    };
    s.app_servers = vec![
        AppServerRun {
            argv: vec!["app-server".into(), "-c".into(), "x=1".into()],
            events: vec![
                event(
                    0,
                    EventKind::Sent(r#"{"method":"initialize","params":{}}"#.into()),
                ),
                event(9, EventKind::Stderr("WARNING: 'x'".into())),
            ],
            end: End::Signal(9),
            turns: vec![turn("<session-1>", 1), turn("<session-2>", 1)],
            line: 0,
        },
        AppServerRun {
            argv: vec!["app-server".into()],
            events: Vec::new(),
            end: End::Cancelled,
            turns: vec![turn("<session-1>", 2)],
            line: 0,
        },
    ];
    s
}

#[test]
fn app_server_scenarios_read_back_the_same() {
    let text = toml_out::to_toml(&app_sample());
    assert!(text.contains("transport = 'app-server'"), "{text}");
    assert!(text.contains("end = { stopped = true }"), "{text}");
    assert!(
        text.contains("after = { request = 'session/request_permission', count = 2 }"),
        "{text}"
    );
    assert!(text.contains("never = true"), "{text}");
    let back = Scenario::parse(&text, Path::new("s.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(strip(back.clone()), app_sample(), "{text}");
    assert_eq!(back.app_servers[1].turns[0].session, "<session-1>");
    assert_eq!(back.app_servers[0].turns.len(), 2);
}

#[test]
fn app_server_tables_are_checked() {
    let base = toml_out::to_toml(&app_sample());
    let cases = [
        (
            base.replace("transport = 'app-server'\n", ""),
            "`[[app_server]]` needs `transport = 'app-server'`",
        ),
        (
            base.replace("transport = 'app-server'", "transport = 'pigeon'"),
            "unknown transport `pigeon`",
        ),
        (
            base.replacen("{ t = 4, write = 'a.txt'", "{ t = 4, out = 'a.txt'", 1),
            "an event here needs `t` and exactly one of `sent`, `recv`, `write`",
        ),
        (
            base.replacen("end = { stopped = true }", "end = { cancelled = true }", 1),
            "`end` needs exactly one of `code = N`, `signal = N` and `stopped = true`",
        ),
        (
            base.replacen(
                r#"sent = '{"method":"initialize","params":{}}'"#,
                "sent = 'nope'",
                1,
            ),
            "a `sent`/`recv` message is not JSON",
        ),
    ];
    for (text, message) in cases {
        let err = Scenario::parse(&text, Path::new("s.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("s.toml:"), "{err}");
        assert!(err.contains(message), "{err}\n{text}");
    }
}

#[test]
fn written_files_read_back_the_same() {
    let text = toml_out::to_toml(&sample());
    let back = Scenario::parse(&text, Path::new("s.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(strip(back), sample(), "{text}");
}

#[test]
fn one_line_per_message_and_event() {
    let text = toml_out::to_toml(&sample());
    let event_lines = text
        .lines()
        .filter(|l| l.trim_start().starts_with("{ t = "))
        .count();
    assert_eq!(event_lines, 5, "{text}");
    assert!(
        text.contains(r#"  { t = 6, out = "'starts with a quote" },"#),
        "{text}"
    );
    assert!(text.contains("\"README.md\" = '''\n# demo repo\n'''"), "{text}");
}

#[test]
fn lines_of_parts_are_kept() {
    let text = toml_out::to_toml(&sample());
    let s = Scenario::parse(&text, Path::new("s.toml")).unwrap();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    // A step is a `[[client]]` table: its line is the header's.
    assert_eq!(
        s.client[2].line,
        line_of("after = { tool_call = 'sleep 30' }") - 1
    );
    assert_eq!(s.codex[0].events[2].line, line_of("starts with a quote"));
    assert_eq!(s.source.unwrap().expect_line, Some(line_of("[expect]")));
}

#[test]
fn thread_ids_in_order() {
    let mut s = sample();
    s.codex[0].events[1].kind = EventKind::Stdout(r#"{"type":"thread.started","thread_id":"t-2"}"#.into());
    s.codex.push(s.codex[0].clone());
    s.codex[1].events[1].kind = EventKind::Stdout(r#"{"type":"thread.started","thread_id":"t-1"}"#.into());
    assert_eq!(s.thread_ids(), ["t-2", "t-1"]);
}

/// Each bad file gives `s.toml:LINE: message` (or TOML's own line and column).
#[test]
fn invalid_files_name_the_line() {
    let head = "version = 1\nname = \"x\"\n";
    let cases: &[(&str, &str)] = &[
        (
            "version = 1\nname = \"x\"\n[[client]]\nsend = 'oops",
            "TOML parse error at line 4",
        ),
        ("version = 1\nname = \"x\"\nbogus = 1\n", "unknown field `bogus`"),
        (
            "version = 2\nname = \"x\"\n",
            "s.toml:1: unsupported scenario version 2",
        ),
        ("name = \"x\"\n", "missing field `version`"),
        (
            &format!("{head}[[client]]\nsend = 'not json'\n"),
            "s.toml:4: `send` is not a JSON message",
        ),
        (
            &format!("{head}[[client]]\nsend = '[1]'\n"),
            "s.toml:4: `send` is not a JSON-RPC message object",
        ),
        (
            &format!("{head}\n[[client]]\nsend = '{{\"jsonrpc\":\"2.0\"}}'\nclose = true\n"),
            "s.toml:4: a client step needs exactly one of",
        ),
        (
            &format!("{head}[[client]]\nafter = {{ response = 1, messages = 2 }}\nclose = true\n"),
            "s.toml:3: `after` needs exactly one of",
        ),
        (
            &format!("{head}[[client]]\nafter = {{ response = [1] }}\nclose = true\n"),
            "must be a request id",
        ),
        (
            &format!("{head}[[answers]]\nmethod = 'm'\nresult = 'nope'\n"),
            "s.toml:3: answer `result` is not JSON",
        ),
        (
            &format!("{head}[[codex]]\nsession = 's'\nturn = 1\nend = {{}}\n"),
            "s.toml:3: `end` needs exactly one of",
        ),
        (
            &format!(
                "{head}[[codex]]\nsession = 's'\nturn = 1\nend = {{ code = 0 }}\nevents = [\n  {{ t = 1, out = 'a' }},\n  {{ t = 2, out = 'b', err = 'c' }},\n]\n"
            ),
            "s.toml:9: an event here needs `t` and exactly one of `out`, `err`",
        ),
        (
            &format!(
                "{head}[[codex]]\nsession = 's'\nturn = 1\nend = {{ code = 0 }}\nevents = [{{ t = 1, delete = '../x' }}]\n"
            ),
            "s.toml:7: `../x` must be a relative path inside the workspace",
        ),
        (
            &format!("{head}[workspace]\ngit = true\nfiles = {{ '/etc/passwd' = 'x' }}\n"),
            "s.toml:3: workspace file `/etc/passwd` must be a relative path",
        ),
    ];
    for (text, expected) in cases {
        let err = Scenario::parse(text, Path::new("s.toml"))
            .expect_err(text)
            .to_string();
        assert!(
            err.contains(expected),
            "for:\n{text}\ngot: {err}\nwanted: {expected}"
        );
        assert!(err.starts_with("s.toml"), "{err}");
    }
}

#[test]
fn lint_finds_odd_provider_streams() {
    let text = format!(
        "version = 1\nname = \"x\"\n[[codex]]\nsession = 's'\nturn = 1\nend = {{ code = 1 }}\nevents = [\n{}\n]\n",
        [
            r#"  { t = 1, out = '{"type":"thread.started","thread_id":"a"}' },"#,
            r#"  { t = 2, out = '{"type":"turn.progress"}' },"#,
            r"  { t = 3, out = 'not json' },",
            r#"  { t = 4, out = '{"no":"type"}' },"#,
        ]
        .join("\n")
    );
    let s = Scenario::parse(&text, Path::new("s.toml")).unwrap();
    let got: Vec<(usize, String)> = lint::warnings(&s)
        .into_iter()
        .map(|w| (w.line, w.message))
        .collect();
    let messages: Vec<&str> = got.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        got.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        [9, 10, 11, 11],
        "{messages:?}"
    );
    assert!(messages[0].contains("unknown event type `turn.progress`"));
    assert!(messages[1].contains("not JSON"));
    assert!(messages[2].contains("no `type`"));
    assert!(messages[3].contains("ends mid-stream (exit code 1) without turn.completed or turn.failed"));
}
