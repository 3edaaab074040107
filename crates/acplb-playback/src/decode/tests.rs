//! Decoding raw streams and transcripts: output lines, format detection, and problems with lines.

use super::*;

fn run(input: &str) -> (Vec<String>, DecodeReport) {
    let mut out = Vec::new();
    let opts = DecodeOptions {
        cwd: Some("/w".into()),
        notices: false,
    };
    let report = decode(Path::new("in.jsonl"), input.as_bytes(), &mut out, opts).unwrap();
    let text = String::from_utf8(out).unwrap();
    (text.lines().map(str::to_owned).collect(), report)
}

const PLAIN: &str = concat!(
    r#"{"type":"thread.started","thread_id":"t-1"}"#,
    "\n",
    r#"{"type":"turn.started"}"#,
    "\n",
    r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hi."}}"#,
    "\n",
    r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":2,"cache_write_input_tokens":0,"output_tokens":3,"reasoning_output_tokens":1}}"#,
    "\n",
);

#[test]
fn a_raw_stream() {
    let (lines, report) = run(PLAIN);
    assert_eq!(report.format, Some(Format::Raw));
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(
        lines,
        [
            r#"{"signal":"thread_started","data":"t-1"}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"<session>","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi."},"messageId":"item_0"}}}"#,
            r#"{"signal":"turn_completed","data":{"input_tokens":10,"cached_input_tokens":2,"cache_write_input_tokens":0,"output_tokens":3,"reasoning_output_tokens":1}}"#,
        ]
    );
}

#[test]
fn a_transcript_gives_the_same_updates_plus_its_exit() {
    let mut transcript = String::from(r#"{"start":{"argv":["exec"],"cwd":"/w","stdin_bytes":3}}"#);
    transcript.push('\n');
    for (i, line) in PLAIN.lines().enumerate() {
        transcript.push_str(&serde_json::json!({"t_ms": i, "stdout": line}).to_string());
        transcript.push('\n');
    }
    transcript.push_str("{\"t_ms\":9,\"stderr\":\"noise\"}\n{\"t_ms\":10,\"exit\":{\"code\":0}}\n");
    let (lines, report) = run(&transcript);
    assert_eq!(report.format, Some(Format::Transcript));
    assert!(!report.failed, "{:?}", report.warnings);
    let (raw, _) = run(PLAIN);
    assert_eq!(lines[..3], raw[..]);
    assert_eq!(lines[3], r#"{"exit":{"code":0}}"#);
}

/// Every problem names the file and the line, and decoding goes on after it.
#[test]
fn problems_name_their_line() {
    let cases: &[(&str, &str, bool)] = &[
        (
            "{\"type\":\"turn.started\"}\nnot json\n",
            "in.jsonl:2: not a Codex event (truncated, or not JSON)",
            true,
        ),
        (
            "{\"type\":\"turn.started\"}\n{\"type\":\"turn.progress\",\"x\":1}\n{\"type\":\"turn.completed\",\"usage\":{}}\n",
            "in.jsonl:2: unknown Codex event type `turn.progress`",
            false,
        ),
        (
            "{\"type\":\"turn.started\"}\n{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"hologram\"}}\n",
            "in.jsonl:2: unknown Codex item type `hologram`",
            false,
        ),
        (
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n",
            "in.jsonl:2: the stream ends without turn.completed or turn.failed",
            false,
        ),
        (
            "{\"type\":\"turn.started\"}\n{\"type\":\"item.comp",
            "in.jsonl:2: not a Codex event (truncated, or not JSON)",
            true,
        ),
        (
            "{\"start\":{\"argv\":[]}}\n{\"t_ms\":1,\"stdout\":\"{}\"}\n",
            "in.jsonl:2: the transcript ends without an exit status (truncated?)",
            true,
        ),
        (
            "{\"start\":{\"argv\":[]}}\n{\"t_ms\":1,\"stdo",
            "in.jsonl:2: not a transcript line (truncated?)",
            true,
        ),
        (
            "{\"start\":{\"argv\":[]}}\n{\"t_ms\":1,\"what\":1}\n{\"t_ms\":2,\"cancelled\":true}\n",
            "in.jsonl:2: unknown transcript line",
            true,
        ),
    ];
    for (input, expected, failed) in cases {
        let (_, report) = run(input);
        assert!(
            report.warnings.iter().any(|w| w.starts_with(expected)),
            "for {input:?}: wanted {expected:?}, got {:?}",
            report.warnings
        );
        assert_eq!(report.failed, *failed, "{input:?}: {:?}", report.warnings);
    }
}

#[test]
fn an_open_tool_call_is_closed_as_failed_at_the_end() {
    let input = concat!(
        r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 30","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        "\n"
    );
    let (lines, _) = run(input);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].contains(r#""status":"failed""#), "{}", lines[1]);
}

#[test]
fn empty_input_is_fine() {
    let (lines, report) = run("");
    assert!(lines.is_empty());
    assert_eq!(report.format, None);
    assert!(!report.failed);
}

const DELTA: &str = r#"{"method":"item/agentMessage/delta","params":{"threadId":"t","turnId":"u","itemId":"msg_1","delta":"Hello there."}}"#;
const ASK: &str = r#"{"id":0,"method":"item/commandExecution/requestApproval","params":{"threadId":"t","turnId":"u","itemId":"call_1"}}"#;
const DONE: &str =
    r#"{"method":"turn/completed","params":{"threadId":"t","turn":{"id":"u","status":"completed"}}}"#;

/// Whatever the app-server decoder makes of a delta, its text reaches an update.
fn app_server_output_is_decoded(lines: &[String], report: &DecodeReport) {
    assert_eq!(report.format, Some(Format::AppServer));
    assert!(
        lines
            .iter()
            .any(|l| l.contains(r#""sessionUpdate":"agent_message_chunk""#) && l.contains("Hello there.")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == r#"{"server_request":{"id":0,"method":"item/commandExecution/requestApproval"}}"#),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l.starts_with(r#"{"signal":"#)), "{lines:#?}");
    assert!(!report.failed, "{:?}", report.warnings);
}

#[test]
fn an_app_server_transcript_and_its_other_forms() {
    let transcript = [
        r#"{"start":{"transport":"app-server","thread":null,"cwd":"/w","stdin_bytes":3,"server":1}}"#
            .to_owned(),
        r#"{"t_ms":1,"sent":{"method":"turn/start","params":{"threadId":"t"}}}"#.to_owned(),
        format!(r#"{{"t_ms":2,"recv":{DELTA}}}"#),
        format!(r#"{{"t_ms":3,"recv":{ASK}}}"#),
        r#"{"t_ms":4,"sent":{"id":0,"result":{"decision":"accept"}}}"#.to_owned(),
        format!(r#"{{"t_ms":5,"recv":{DONE}}}"#),
    ]
    .join("\n");
    let (lines, report) = run(&transcript);
    app_server_output_is_decoded(&lines, &report);
    let sent_text = lines.iter().any(|l| l.contains("accept"));
    assert!(!sent_text, "what acplb sent is not decoded: {lines:#?}");

    let dirs = [
        r#"{"dir":"out","msg":{"id":3,"method":"turn/start","params":{"threadId":"t"}}}"#.to_owned(),
        format!(r#"{{"dir":"in","msg":{DELTA}}}"#),
        format!(r#"{{"dir":"in","msg":{ASK}}}"#),
        format!(r#"{{"dir":"in","msg":{DONE}}}"#),
    ]
    .join("\n");
    let (lines, report) = run(&dirs);
    app_server_output_is_decoded(&lines, &report);

    let raw = [r#"{"id":3,"result":{"turn":{"id":"u"}}}"#, DELTA, ASK, DONE].join("\n");
    let (lines, report) = run(&raw);
    app_server_output_is_decoded(&lines, &report);
}

#[test]
fn an_app_server_stream_cut_short_is_reported() {
    let (_, report) = run(&format!("{DELTA}\nnot json\n"));
    assert_eq!(report.format, Some(Format::AppServer));
    assert!(report.failed);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.starts_with("in.jsonl:2: not JSON")),
        "{:?}",
        report.warnings
    );
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("without turn/completed")),
        "{:?}",
        report.warnings
    );
}
