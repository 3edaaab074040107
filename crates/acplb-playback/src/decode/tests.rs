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
