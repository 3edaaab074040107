//! The mock model over real HTTP: streams, errors, limits, the request log and shutdown.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use acplb_playback::mock_model::{MockConfig, MockModel, Script};
use serde_json::{Value, json};

use crate::util::{body_with, post_responses, request};

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn done_items(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| &e["item"])
        .collect()
}

#[test]
fn plain_scenario_streams_reasoning_and_a_final_message_and_is_logged() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    assert!(mock.base_url().starts_with("http://127.0.0.1:"));
    assert!(mock.base_url().ends_with("/v1"));
    let response = post_responses(
        mock.addr(),
        &body_with(&["<environment_context/>", "scenario:plain hi"], &[]),
    );
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert!(response.chunked_complete, "the stream ends with the last chunk");
    let events = response.sse_events();
    assert_eq!(kinds(&events).first(), Some(&"response.created"));
    assert_eq!(kinds(&events).last(), Some(&"response.completed"));
    let items = done_items(&events);
    assert_eq!(items[0]["type"], "reasoning");
    assert_eq!(
        items[1]["content"][0]["text"],
        "Hello! I am the mock model. 2 + 2 = 4."
    );
    assert_eq!(items[1]["phase"], "final_answer");

    let log = mock.requests();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].method, "POST");
    assert_eq!(log[0].path, "/v1/responses");
    assert_eq!(log[0].scenario.as_deref(), Some("plain"));
    assert_eq!(log[0].status, 200);
    assert_eq!(log[0].header("authorization"), Some("Bearer dummy"));
    assert_eq!(log[0].header("originator"), Some("codex_exec"));
    assert_eq!(log[0].header("session-id"), Some("s-1"));
    assert_eq!(log[0].headers.get("x-not-logged"), None);
    assert_eq!(
        log[0].user_texts(),
        ["<environment_context/>", "scenario:plain hi"]
    );
}

#[test]
fn tool_outputs_advance_the_step_and_are_quoted() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let step0 = post_responses(mock.addr(), &body_with(&["scenario:shell list"], &[])).sse_events();
    let call = done_items(&step0)
        .into_iter()
        .find(|i| i["type"] == "function_call")
        .unwrap()
        .clone();
    assert_eq!(call["name"], "exec_command");
    let output = json!({"type": "function_call_output", "call_id": call["call_id"],
        "output": "Process exited with code 0\nOutput:\nREADME.md\n"});
    let step1 = post_responses(
        mock.addr(),
        &body_with(&["scenario:shell list"], &[call.clone(), output]),
    )
    .sse_events();
    assert_eq!(
        done_items(&step1)[0]["content"][0]["text"],
        "The directory listing succeeded. Output began: Process exited with code 0 | Output: | README.md | "
    );
    let logged_steps: Vec<usize> = mock.requests().iter().map(|r| r.step).collect();
    assert_eq!(logged_steps, [0, 1]);
}

#[test]
fn no_token_plays_the_default_scenario() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let events = post_responses(mock.addr(), &body_with(&["just chatting"], &[])).sse_events();
    assert_eq!(
        done_items(&events)[0]["content"][0]["text"],
        "Hello from the mock model."
    );
    assert_eq!(mock.requests()[0].scenario.as_deref(), Some("default"));
}

#[test]
fn http_error_scenarios_answer_with_status_and_json() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    for (scenario, status, message) in [
        ("http400", 400, "Invalid 'input': mock bad request."),
        ("http401", 401, "Incorrect API key provided: dummy."),
        ("http429", 429, "Rate limit reached. Please try again in 1s."),
        ("http500", 500, "mock internal server error"),
    ] {
        let response = post_responses(mock.addr(), &body_with(&[&format!("scenario:{scenario}")], &[]));
        assert_eq!(response.status, status, "{scenario}");
        assert_eq!(response.header("content-type"), Some("application/json"));
        assert_eq!(response.json()["error"]["message"], message, "{scenario}");
    }
    let statuses: Vec<u16> = mock.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [400, 401, 429, 500]);
}

#[test]
fn failed_and_truncated_streams_have_no_completed_event() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let failed = post_responses(mock.addr(), &body_with(&["scenario:ctxwindow"], &[])).sse_events();
    assert_eq!(
        kinds(&failed),
        ["response.created", "response.in_progress", "response.failed"]
    );
    assert_eq!(failed[2]["response"]["error"]["code"], "context_length_exceeded");

    let truncated = post_responses(mock.addr(), &body_with(&["scenario:truncated"], &[]));
    assert!(
        truncated.chunked_complete,
        "the body itself ends cleanly; only the terminal event is missing"
    );
    let events = truncated.sse_events();
    assert_eq!(kinds(&events).last(), Some(&"response.output_text.delta"));
    assert!(!kinds(&events).contains(&"response.completed"));
}

#[test]
fn malformed_requests_get_4xx_answers_and_are_logged() {
    let config = MockConfig::default().with_max_body_bytes(1024);
    let mock = MockModel::start(config).unwrap();
    let addr = mock.addr();

    let malformed = request(addr, "POST", "/v1/responses", &[], b"{not json");
    assert_eq!(malformed.status, 400);
    let message = malformed.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.starts_with("malformed JSON body: "), "{message}");

    let too_big = request(addr, "POST", "/v1/responses", &[], &vec![b' '; 4096]);
    assert_eq!(too_big.status, 413);
    assert_eq!(
        too_big.json()["error"]["message"],
        "request body exceeds 1024 bytes"
    );

    let zstd = request(
        addr,
        "POST",
        "/v1/responses",
        &[("Content-Encoding", "zstd")],
        b"\x28\xb5\x2f\xfd",
    );
    assert_eq!(zstd.status, 415);
    assert_eq!(
        zstd.json()["error"]["message"],
        "unsupported content-encoding `zstd`"
    );

    let unknown = request(addr, "POST", "/v1/chat/completions", &[], b"{}");
    assert_eq!(unknown.status, 404);
    let get = request(addr, "GET", "/v1/responses", &[], b"");
    assert_eq!(get.status, 405);
    let models = request(addr, "GET", "/v1/models", &[], b"");
    assert_eq!(models.json(), json!({"object": "list", "data": []}));

    let log = mock.requests();
    let summary: Vec<(&str, &str, u16, bool)> = log
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str(), r.status, r.body.is_null()))
        .collect();
    assert_eq!(
        summary,
        [
            ("POST", "/v1/responses", 400, true),
            ("POST", "/v1/responses", 413, true),
            ("POST", "/v1/responses", 415, true),
            ("POST", "/v1/chat/completions", 404, true),
            ("GET", "/v1/responses", 405, true),
            ("GET", "/v1/models", 200, true),
        ]
    );
    assert_eq!(log[2].header("content-encoding"), Some("zstd"));
}

#[test]
fn custom_scripts_delays_and_the_log_file() {
    let script = Script::from_toml_str(
        r#"
        [[scenarios.slow.steps]]
        delay_ms = 40
        actions = [{ type = "message", text = "one" }, { type = "message", text = "two" }]
        "#,
        "inline",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("requests.jsonl");
    let mock = MockModel::start(MockConfig::default().with_script(script).with_log_file(&log_path)).unwrap();
    let started = Instant::now();
    let events = post_responses(mock.addr(), &body_with(&["scenario:slow"], &[])).sse_events();
    let elapsed = started.elapsed();
    // A lower bound only: the delay sits between each pair of events.
    let gaps = u32::try_from(events.len() - 1).unwrap();
    assert!(
        elapsed >= Duration::from_millis(40) * gaps,
        "{elapsed:?} for {} events",
        events.len()
    );
    let texts: Vec<&Value> = done_items(&events)
        .iter()
        .map(|i| &i["content"][0]["text"])
        .collect();
    assert_eq!(texts, ["one", "two"]);
    // The script replaced the built-ins: `plain` is unknown here.
    let unknown = post_responses(mock.addr(), &body_with(&["scenario:plain"], &[])).sse_events();
    assert_eq!(
        done_items(&unknown)[0]["content"][0]["text"],
        "Unknown scenario `plain` (step 0)."
    );

    let lines: Vec<Value> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let in_memory: Vec<Value> = mock
        .requests()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(lines, in_memory);
    assert_eq!(
        lines[0]["body"]["input"][0]["content"][0]["text"],
        "scenario:slow"
    );
}

#[tokio::test]
async fn works_from_inside_a_runtime_and_stops_on_drop() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let addr = mock.addr();
    let response =
        tokio::task::spawn_blocking(move || post_responses(addr, &body_with(&["scenario:plain"], &[])))
            .await
            .unwrap();
    assert_eq!(response.status, 200);

    // A keep-alive connection that has been served once stays open while the server lives...
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    idle.write_all(b"GET /v1/models HTTP/1.1\r\nHost: mock\r\n\r\n")
        .unwrap();
    let expected_tail = br#"{"object":"list","data":[]}"#;
    let mut received = Vec::new();
    while !received.ends_with(expected_tail) {
        let mut chunk = [0_u8; 1024];
        let n = idle.read(&mut chunk).unwrap();
        assert_ne!(n, 0, "closed early: {}", String::from_utf8_lossy(&received));
        received.extend_from_slice(&chunk[..n]);
    }
    // ...and dropping the handle closes it. (Checking that the port refuses connections would race
    // with other tests reusing the freed ephemeral port.)
    drop(mock);
    let mut rest = [0_u8; 16];
    match idle.read(&mut rest) {
        Ok(n) => assert_eq!(n, 0, "still served after drop"),
        Err(error) => assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}"),
    }
}

#[test]
fn a_taken_port_is_a_bind_error() {
    let first = MockModel::start(MockConfig::default()).unwrap();
    let error = MockModel::start(MockConfig::default().with_port(first.addr().port())).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("failed to bind the mock model to `{}`", first.addr())
    );
}

#[test]
fn reviewer_requests_get_the_scenario_verdict_and_are_flagged_in_the_log() {
    let mock = MockModel::start(MockConfig::default()).unwrap();
    let mut body = body_with(&["Transcript:\nuser: scenario:escalate_deny go"], &[]);
    body["text"] = json!({"format": {"type": "json_schema", "name": "codex_output_schema",
        "schema": {"properties": {"risk_level": {}, "user_authorization": {}, "outcome": {}, "rationale": {}}}}});
    let events = post_responses(mock.addr(), &body).sse_events();
    let verdict: Value =
        serde_json::from_str(done_items(&events)[0]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(verdict["outcome"], "deny");
    post_responses(mock.addr(), &body_with(&["scenario:escalate_deny go"], &[]));
    let log = mock.requests();
    let flags: Vec<(Option<&str>, bool)> = log.iter().map(|r| (r.scenario.as_deref(), r.review)).collect();
    assert_eq!(
        flags,
        [(Some("escalate_deny"), true), (Some("escalate_deny"), false)]
    );
}
