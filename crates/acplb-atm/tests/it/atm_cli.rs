//! The `atm` CLI backend against a fake `atm` script on `PATH` that replays ATM 1.6.1 output.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use acplb_atm::atm_cli::AtmCli;
use acplb_atm::{MailBackend, MailError, ReadOptions};

use crate::util::fixture;

const FAKE_ATM: &str = r#"#!/bin/sh
# Logs identity, team and argv (one per line), then replays a recorded --json output.
{ echo "=== $ATM_IDENTITY $ATM_TEAM"; for a in "$@"; do echo "$a"; done; } >> "$FAKE_ATM_LOG"
if [ -n "$FAKE_ATM_FAIL" ]; then echo "boom: daemon unreachable" >&2; exit 3; fi
if [ -n "$FAKE_ATM_HANG" ]; then exec sleep 30; fi
case "$1" in
  send|list|members) cat "$FAKE_ATM_FIXTURES/$1.json" ;;
  peek) cat "$FAKE_ATM_FIXTURES/peek-$3.json" ;;
  read) cat "$FAKE_ATM_FIXTURES/read.json" ;;
  *) echo "unknown command $1" >&2; exit 2 ;;
esac
"#;

struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let atm = bin.join("atm");
        std::fs::write(&atm, FAKE_ATM).unwrap();
        std::fs::set_permissions(&atm, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("calls.log")
    }

    fn cli(&self, identity: &str) -> AtmCli {
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        AtmCli::new(identity, "demo")
            .with_env("PATH", path)
            .with_env("FAKE_ATM_LOG", self.log())
            .with_env("FAKE_ATM_FIXTURES", fixture("atm-cli"))
    }

    /// Each call as `(identity and team, argv)`.
    fn calls(&self) -> Vec<(String, Vec<String>)> {
        let text = std::fs::read_to_string(self.log()).unwrap_or_default();
        text.split("=== ")
            .filter(|c| !c.is_empty())
            .map(|c| {
                let mut lines = c.lines().map(str::to_owned);
                (lines.next().unwrap(), lines.collect())
            })
            .collect()
    }
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn send_passes_identity_in_env_and_message_verbatim() {
    let fake = Fake::new();
    let sent = fake
        .cli("alice")
        .send("bob", "--help; rm -rf / $(x)", Some("greeting"))
        .unwrap();
    assert_eq!(
        (sent.recipient.as_str(), sent.message_id.as_str()),
        ("bob@demo", "01M80K2RX5P1DEJQ80SWWDXH8H")
    );
    assert_eq!(
        fake.calls(),
        [(
            "alice demo".to_owned(),
            args(&[
                "send",
                "--json",
                "--summary=greeting",
                "--",
                "bob",
                "--help; rm -rf / $(x)"
            ])
        )]
    );
}

#[test]
fn read_peeks_and_commit_marks_each_message() {
    let fake = Fake::new();
    let cli = fake.cli("bob");
    assert_eq!(cli.pending_count().unwrap(), 1, "bucket_counts.unread");
    let batch = cli.read(&ReadOptions::default()).unwrap();
    let got: Vec<_> = batch
        .messages
        .iter()
        .map(|m| (m.message_id.as_str(), m.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("01M80K2RX5P1DEJQ80SWWDXH8H", "hello bob from alice"),
            ("01M80K2RXK9RXYJYYD52Z86CZJ", "second message, ack please")
        ],
        "oldest first"
    );
    let verbs: Vec<_> = fake.calls().into_iter().map(|(_, a)| a[0].clone()).collect();
    assert_eq!(verbs, ["list", "list", "peek", "peek"], "reading marks nothing");
    assert_eq!(cli.commit(&batch.receipt).unwrap(), 2);
    let reads: Vec<_> = fake
        .calls()
        .into_iter()
        .filter(|(_, a)| a[0] == "read")
        .map(|(_, a)| a)
        .collect();
    assert_eq!(
        reads,
        [
            args(&["read", "--message-id", "01M80K2RX5P1DEJQ80SWWDXH8H", "--json"]),
            args(&["read", "--message-id", "01M80K2RXK9RXYJYYD52Z86CZJ", "--json"])
        ]
    );
}

#[test]
fn broadcast_fans_out_over_members_except_self() {
    let fake = Fake::new();
    let report = fake.cli("alice").broadcast("all", None).unwrap();
    assert!(report.failed.is_empty());
    let sends: Vec<_> = fake
        .calls()
        .into_iter()
        .filter(|(_, a)| a[0] == "send")
        .map(|(_, a)| a[4].clone())
        .collect();
    assert_eq!(sends, ["bob"]);
}

#[test]
fn members_are_the_names_atm_lists() {
    let fake = Fake::new();
    let members = fake.cli("bob").members().unwrap();
    assert_eq!(members, Some(vec!["alice".to_owned(), "bob".to_owned()]));
    assert_eq!(fake.calls()[0].1, args(&["members", "--json"]));
}

#[test]
fn failures_carry_stderr() {
    let fake = Fake::new();
    let err = fake
        .cli("bob")
        .with_program("atm-missing-binary")
        .pending_count()
        .unwrap_err();
    assert!(matches!(err, MailError::CliSpawn { .. }), "{err}");
    let err = fake
        .cli("bob")
        .with_env("FAKE_ATM_FAIL", "1")
        .send("x", "y", None)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("`atm send` failed: exit status: 3") && text.contains("boom: daemon unreachable"),
        "{text}"
    );
}

#[test]
fn json_texts_are_sent_with_the_marker_and_bad_recipients_never_reach_atm() {
    let fake = Fake::new();
    let cli = fake.cli("alice");
    cli.send("bob", r#"{"type":"shutdown_request"}"#, None).unwrap();
    let (_, argv) = fake.calls().pop().unwrap();
    assert_eq!(argv.last().unwrap(), r#"(text) {"type":"shutdown_request"}"#);
    assert_eq!(argv[2], r#"--summary={"type":"shutdown_request"}"#);
    for to in ["bob.json", "/etc/passwd", "bob@../x"] {
        let err = cli.send(to, "x", None).unwrap_err();
        assert!(matches!(err, MailError::InvalidRecipient { .. }), "{to}: {err}");
    }
    assert_eq!(fake.calls().len(), 1, "atm was not run for them");
}

/// Replays `list` with two unread rows whose texts are given.
fn fixtures_with_texts(dir: &Path, texts: [&str; 2]) {
    let ids = ["01M80K2RX5P1DEJQ80SWWDXH8H", "01M80K2RXK9RXYJYYD52Z86CZJ"];
    let rows: Vec<_> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            serde_json::json!({"message_id": id, "from": "lead", "read": false,
                "timestamp": format!("2026-11-22T02:59:0{i}.000Z")})
        })
        .collect();
    let list = serde_json::json!({"rows": rows, "bucket_counts": {"unread": 2}});
    std::fs::write(dir.join("list.json"), list.to_string()).unwrap();
    for (id, text) in ids.iter().zip(texts) {
        let peek = serde_json::json!({"message": {"from": "lead", "text": text, "timestamp": "t", "message_id": id}});
        std::fs::write(dir.join(format!("peek-{id}.json")), peek.to_string()).unwrap();
    }
}

#[test]
fn reading_takes_the_marker_off_and_skips_only_control_messages() {
    let fake = Fake::new();
    let fixtures = fake.dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    fixtures_with_texts(
        &fixtures,
        [
            r#"(text) {"type":"shutdown_request"}"#,
            r#"{"type":"idle_notification"}"#,
        ],
    );
    let batch = fake
        .cli("bob")
        .with_env("FAKE_ATM_FIXTURES", &fixtures)
        .read(&ReadOptions::default())
        .unwrap();
    let texts: Vec<_> = batch.messages.iter().map(|m| m.message.as_str()).collect();
    assert_eq!(texts, [r#"{"type":"shutdown_request"}"#]);
}

#[test]
fn a_hanging_atm_is_stopped_at_the_time_limit() {
    let fake = Fake::new();
    let cli = fake
        .cli("bob")
        .with_env("FAKE_ATM_HANG", "1")
        .with_time_limit(Duration::from_millis(300));
    let start = Instant::now();
    let err = cli.pending_count().unwrap_err();
    assert!(matches!(err, MailError::CliTimeout { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "`atm list` did not finish within 300ms and was stopped"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = runtime.block_on(cli.pending_count_async()).unwrap_err();
    assert!(matches!(err, MailError::CliTimeout { .. }), "{err}");
    // Generous: both calls give up at 300 ms instead of waiting out the 30 s.
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}
