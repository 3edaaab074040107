//! `acplb queue send` and `acplb queue list` on a fresh state dir, and a consumer (the library)
//! reading what the CLI sent.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use acplb_core::sessions::queue::{MAX_TEXT_BYTES, Queue};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `acplb queue ARGS` with `ACPLB_STATE_DIR=state`, `stdin` on its standard input.
fn queue(state: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(ACPLB)
        .arg("queue")
        .args(args)
        .env("ACPLB_STATE_DIR", state)
        .env("RUST_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // acplb may refuse the message before reading it all: a broken pipe is then expected.
    input.write_all(stdin).ok();
    drop(input);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn a_sent_message_is_listed_and_claimable() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let sent = queue(
        &state,
        &["send", "bob@core", "please rebase", "--from", "arch@core"],
        b"",
    );
    assert_eq!(sent.code, Some(0), "{}", sent.stderr);
    assert!(
        !sent.stderr.contains("warning"),
        "a worker target: {}",
        sent.stderr
    );
    let id = sent.stdout.trim().to_owned();
    assert_eq!(id.len(), 36, "{id}");

    let listed = queue(&state, &["list", "bob@core", "--json"], b"");
    assert_eq!(listed.code, Some(0), "{}", listed.stderr);
    let doc: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(doc["target"], "bob@core");
    assert_eq!(doc["pending"][0]["id"], id.as_str());
    assert_eq!(doc["pending"][0]["from"], "arch@core");
    assert_eq!(doc["pending"][0]["text"], "please rebase");
    assert!(doc["pending"][0]["sentAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(doc["claimed"], serde_json::json!([]));

    let table = queue(&state, &["list", "bob@core"], b"");
    assert!(
        table.stdout.contains(&format!("{id}  pending")),
        "{}",
        table.stdout
    );

    // A consumer gets exactly what the CLI sent, and `list` shows the claim.
    let mut q = Queue::open(&state, "bob@core").unwrap();
    let claim = q.claim_next().unwrap().unwrap();
    assert_eq!(claim.message().id.to_string(), id);
    let listed = queue(&state, &["list", "bob@core", "--json"], b"");
    let doc: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(doc["pending"], serde_json::json!([]));
    assert_eq!(doc["claimed"][0]["id"], id.as_str());
    claim.done().unwrap();
}

#[test]
fn a_message_can_come_from_stdin() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let session = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
    let sent = queue(&state, &["send", session, "-"], "first\nsecond ✓\n".as_bytes());
    assert_eq!(sent.code, Some(0), "{}", sent.stderr);
    let pending = Queue::open(&state, session).unwrap().pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].text, "first\nsecond ✓\n");
    assert_eq!(pending[0].from, None);
    assert_eq!(pending[0].id.to_string(), sent.stdout.trim());
}

/// A session id no session of this state directory has (a typo, most often) is warned about on
/// stderr; the message is still queued, for a session of that id opened later. A kept session
/// gets no warning.
#[test]
fn a_message_for_a_session_not_kept_here_is_queued_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let missing = queue(&state, &["send", "0b6a3f0e-no-such-session", "hello"], b"");
    assert_eq!(missing.code, Some(0), "{}", missing.stderr);
    assert!(
        missing
            .stderr
            .contains("warning: no session `0b6a3f0e-no-such-session` is kept in"),
        "{}",
        missing.stderr
    );
    let id = missing.stdout.trim();
    assert!(
        state
            .join(format!("queue/0b6a3f0e-no-such-session/{id}.json"))
            .is_file(),
        "still queued"
    );
    let kept = state.join("sessions/kept-session");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join("journal.jsonl"), "").unwrap();
    let sent = queue(&state, &["send", "kept-session", "hello"], b"");
    assert_eq!(sent.code, Some(0), "{}", sent.stderr);
    assert!(!sent.stderr.contains("warning"), "{}", sent.stderr);
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let big = vec![b'x'; MAX_TEXT_BYTES + 1];
    let cases: [(&[&str], &[u8], &str); 5] = [
        (&["send", "../etc", "hi"], b"", "`../etc` is not a queue target"),
        (
            &["send", "bob@core/x", "hi"],
            b"",
            "may hold neither `/` nor `..`",
        ),
        (&["list", "a b"], b"", "`a b` is not a queue target"),
        (&["send", "bob@core", "-"], b" \n", "the message is empty"),
        (&["send", "bob@core", "-"], &big, "more than the 1048576 bytes"),
    ];
    for (args, stdin, want) in cases {
        let run = queue(&state, args, stdin);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    assert!(!state.exists(), "a refused message creates nothing");
}

#[test]
fn no_state_dir_is_an_error() {
    let out = Command::new(ACPLB)
        .args(["queue", "send", "bob@core", "hi"])
        .env_remove("ACPLB_STATE_DIR")
        .env_remove("XDG_STATE_HOME")
        .env_remove("HOME")
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no state directory"), "{stderr}");
}
