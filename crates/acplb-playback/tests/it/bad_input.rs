//! Bad input gives a clear message naming the file and line, and nothing panics: malformed
//! scenarios, transcripts that are cut off or not JSON, unknown event types, a Codex that stops
//! mid-stream, a scenario with too few Codex runs, a changed expectation.

use std::path::{Path, PathBuf};

use crate::bins::{corpus_dir, playback, text};

/// A corpus scenario's text with `edit` applied, written to `dir/name`.
fn edited(dir: &Path, from: &str, name: &str, edit: impl FnOnce(String) -> String) -> PathBuf {
    let original = std::fs::read_to_string(corpus_dir().join(from)).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, edit(original)).unwrap();
    path
}

fn assert_no_panic(stderr: &str) {
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_malformed_scenario_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = edited(dir.path(), "plain.toml", "bad.toml", |t| {
        t.replacen("[[client]]\nsend = '", "[[client]]\nsend = 'x", 1)
    });
    let output = playback(&["run", bad.to_str().unwrap()]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let line = std::fs::read_to_string(&bad)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("send = 'x"))
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!(
            "{}:{}: `send` is not a JSON message",
            bad.display(),
            line
        )),
        "{stderr}"
    );
    assert_no_panic(&stderr);

    let broken = edited(dir.path(), "plain.toml", "broken.toml", |t| {
        t.replacen("version = 1", "version = [", 1)
    });
    let output = playback(&["check", broken.to_str().unwrap(), bad.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "ERROR   {}\n  {}: TOML parse error at line 4",
            broken.display(),
            broken.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "  {}:{line}: `send` is not a JSON message",
            bad.display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 2 failed"), "{stdout}");
    assert_no_panic(&stderr);
}

#[test]
fn a_changed_expectation_shows_a_unified_diff_and_bless_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(dir.path(), "reasoning.toml", "reasoning.toml", |t| {
        let at = t.find("[expect]").unwrap();
        format!("{}{}", &t[..at], t[at..].replace("2 + 2 = 4.", "2 + 2 = 5."))
    });
    let output = playback(&["check", path.to_str().unwrap()]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!("FAILED  {}", path.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains("[expect] output\n+++ replay output\n@@"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with('-') && l.contains("2 + 2 = 5.")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with('+') && l.contains("2 + 2 = 4.")),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");

    let before = std::fs::read_to_string(&path).unwrap();
    let output = playback(&["check", "--bless", path.to_str().unwrap()]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(text(&output).0.contains("blessed"), "{:?}", text(&output));
    let after = std::fs::read_to_string(&path).unwrap();
    let head = |s: &str| s[..s.find("[expect]").unwrap()].to_owned();
    assert_eq!(head(&before), head(&after), "only [expect] changes");
    let original = std::fs::read_to_string(corpus_dir().join("reasoning.toml")).unwrap();
    assert_eq!(after, original, "blessing restores the recorded expectation");
    assert!(playback(&["check", path.to_str().unwrap()]).status.success());
}

#[test]
fn a_codex_that_stops_mid_stream_is_reported_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(dir.path(), "reasoning.toml", "cut.toml", |t| {
        let kept: Vec<&str> = t.lines().filter(|l| !l.contains("turn.completed")).collect();
        (kept.join("\n") + "\n").replace("end = { code = 0 }", "end = { code = 1 }")
    });
    let output = playback(&["run", path.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert_no_panic(&stderr);
    let line = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .position(|l| l.contains("Hello! I am the mock model"))
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!("{}:{line}: warning: codex run 1 ends mid-stream (exit code 1) without turn.completed or turn.failed", path.display())),
        "{stderr}"
    );
    // acplb answers the prompt with an error; the replay itself works.
    assert!(
        stdout.lines().any(|l| l.contains(r#""id":2,"error""#)),
        "{stdout}"
    );
    assert!(output.status.success(), "{stderr}");
}

#[test]
fn too_few_recorded_runs_is_a_note_and_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(dir.path(), "multi-turn-resume.toml", "short.toml", |t| {
        // Keep the first [[codex]] run only.
        let first = t.find("[[codex]]").unwrap();
        let second = first + 1 + t[first + 1..].find("[[codex]]").unwrap();
        let expect = t.find("\n# What `playback run` prints").unwrap();
        format!("{}{}", &t[..second], &t[expect..])
    });
    let output = playback(&["check", path.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("acplb started Codex run 2 but the scenario records only 1"),
        "{stdout}"
    );
    assert_no_panic(&stderr);
}

fn decode(content: &str) -> (Option<i32>, String, String, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.jsonl");
    std::fs::write(&path, content).unwrap();
    let output = playback(&["decode", path.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert_no_panic(&stderr);
    (output.status.code(), stdout, stderr, path, dir)
}

#[test]
fn decode_reports_lines_that_are_not_json() {
    let (code, stdout, stderr, path, _dir) = decode(
        "{\"type\":\"turn.started\"}\nnot json\n{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"after\"}}\n",
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(&format!(
            "{}:2: not a Codex event (truncated, or not JSON)",
            path.display()
        )),
        "{stderr}"
    );
    assert!(stdout.contains("after"), "decoding goes on: {stdout}");
}

#[test]
fn decode_reports_a_truncated_transcript() {
    let (code, _, stderr, path, _dir) = decode(
        "{\"start\":{\"argv\":[],\"cwd\":\"/w\",\"stdin_bytes\":1}}\n{\"t_ms\":3,\"stdout\":\"{\\\"type\\\":\\\"turn.started\\\"}\"}\n{\"t_ms\":4,\"std",
    );
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains(&format!(
            "{}:3: not a transcript line (truncated?)",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{}:3: the transcript ends without an exit status (truncated?)",
            path.display()
        )),
        "{stderr}"
    );
}

#[test]
fn decode_warns_about_unknown_event_types_and_goes_on() {
    let (code, stdout, stderr, path, _dir) = decode(
        "{\"type\":\"turn.started\"}\n{\"type\":\"turn.progress\",\"phase\":\"x\"}\n{\"type\":\"turn.completed\",\"usage\":{}}\n",
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:2: unknown Codex event type `turn.progress`",
            path.display()
        )),
        "{stderr}"
    );
    assert!(stdout.contains("turn_completed"), "{stdout}");
}

#[test]
fn decode_warns_when_codex_stopped_mid_stream() {
    let (code, stdout, stderr, path, _dir) = decode(concat!(
        r#"{"type":"turn.started"}"#,
        "\n",
        r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 30","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        "\n",
    ));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:2: the stream ends without turn.completed or turn.failed",
            path.display()
        )),
        "{stderr}"
    );
    assert!(
        stdout.lines().last().unwrap().contains(r#""status":"failed""#),
        "open tool calls are closed: {stdout}"
    );
}

#[test]
fn decode_of_a_missing_file_says_which() {
    let output = playback(&["decode", "/definitely/not/here.jsonl"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output)
            .1
            .contains("cannot open `/definitely/not/here.jsonl`"),
        "{:?}",
        text(&output)
    );
}
