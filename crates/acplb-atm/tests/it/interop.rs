//! Interop with files written by real ATM 1.1.2 / 1.6.1 and Claude Code, both directions.

use acplb_atm::record::{content_key, legacy_uuid};
use acplb_atm::{MailError, ReadOptions};
use serde_json::json;

use crate::util::{empty_root, fixture, inbox, raw_records, records, store, v112_root};

#[test]
fn reads_atm_112_inboxes() {
    let root = v112_root();
    let batch = store(root.path(), "bob").read(&ReadOptions::default()).unwrap();
    let got: Vec<_> = batch
        .messages
        .iter()
        .map(|m| {
            (
                m.from.as_str(),
                m.message.as_str(),
                m.timestamp.as_str(),
                m.message_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "alice",
                "hello bob from alice (atm 1.1.2)",
                "2026-11-22T03:01:07.581Z",
                "01M80K6HVXY946P0AB3J0BCP0Z"
            ),
            (
                "alice",
                "please ack this",
                "2026-11-22T03:01:07.596Z",
                "01M80K6HWCSXJQCY9FQCT0HJJP"
            ),
            (
                "team-lead",
                "hi from lead",
                "2026-11-22T03:01:07.601Z",
                "01M80K6HWHYN9EGK0C6N25W8EK"
            ),
        ],
        "the native record is already read and is not returned"
    );
    assert_eq!(batch.remaining, 0);
    assert_eq!(store(root.path(), "bob").pending_count().unwrap(), 3);

    let alice = store(root.path(), "alice").read(&ReadOptions::default()).unwrap();
    assert_eq!(alice.messages.len(), 1);
    assert_eq!(alice.messages[0].message_id, "01M80K6XCVN03G641HCKRZFC0P");
    assert_eq!(alice.messages[0].from, "bob");
}

#[test]
fn reads_a_claude_native_record_with_a_content_key() {
    let root = empty_root();
    std::fs::copy(fixture("claude-native/bob.json"), inbox(root.path(), "bob")).unwrap();
    let batch = store(root.path(), "bob").read(&ReadOptions::default()).unwrap();
    assert_eq!(batch.messages.len(), 1);
    let m = &batch.messages[0];
    assert_eq!(m.from, "claude-lead");
    assert_eq!(m.message, "hello bob, written Claude-natively into bob.json");
    assert_eq!(m.timestamp, "2026-11-22T03:00:00.000Z");
    assert_eq!(
        m.message_id,
        content_key("claude-lead", "2026-11-22T03:00:00.000Z", &m.message)
    );
}

#[test]
fn zero_byte_inbox_is_empty_and_writable() {
    let root = empty_root();
    std::fs::copy(fixture("v1.6.1/alice-empty.json"), inbox(root.path(), "alice")).unwrap();
    let alice = store(root.path(), "alice");
    assert!(alice.read(&ReadOptions::default()).unwrap().messages.is_empty());
    assert_eq!(alice.pending_count().unwrap(), 0);
    store(root.path(), "bob").send("alice", "hi", None).unwrap();
    assert_eq!(alice.pending_count().unwrap(), 1);
    assert!(
        std::fs::read_to_string(inbox(root.path(), "alice"))
            .unwrap()
            .starts_with("[\n  {\n    \"from\": \"bob\",")
    );
}

/// Appending keeps every foreign record, the file's layout and its trailing newline, byte for byte.
#[test]
fn append_preserves_foreign_records_byte_for_byte() {
    let root = v112_root();
    std::fs::copy(fixture("claude-native/bob.json"), inbox(root.path(), "team-lead")).unwrap();
    for agent in ["bob", "alice", "team-lead"] {
        let path = inbox(root.path(), agent);
        let before = std::fs::read_to_string(&path).unwrap();
        store(root.path(), "codex")
            .send(agent, "from acplb", Some("s"))
            .unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        let head = before.rfind('}').unwrap() + 1;
        assert_eq!(after[..head], before[..head], "{agent}: prefix changed");
        assert!(
            after.ends_with(&before[before.rfind(']').unwrap()..]),
            "{agent}: tail changed"
        );
        let (old, new) = (raw_records(&before), raw_records(&after));
        assert_eq!(new[..old.len()], old[..], "{agent}");
        assert_eq!(new.len(), old.len() + 1);
    }
}

#[test]
fn written_records_follow_the_interop_shape_and_read_back() {
    let root = v112_root();
    let codex = store(root.path(), "codex");
    let sent = codex.send("bob@demo", &"y".repeat(70), None).unwrap();
    assert_eq!(sent.recipient, "bob@demo");
    assert!(!sent.already_present);
    let rec = records(&inbox(root.path(), "bob")).pop().unwrap();
    let id: ulid::Ulid = sent.message_id.parse().unwrap();
    let keys: Vec<_> = rec.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "from",
            "text",
            "timestamp",
            "read",
            "summary",
            "message_id",
            "metadata"
        ]
    );
    assert_eq!(rec["from"], "codex");
    assert_eq!(rec["read"], false);
    assert_eq!(rec["summary"], format!("{}...", "y".repeat(60)));
    assert_eq!(rec["message_id"], legacy_uuid(id));
    assert_eq!(
        rec["metadata"],
        json!({"atm": {"messageId": sent.message_id, "sourceTeam": "demo"}})
    );
    let ts = rec["timestamp"].as_str().unwrap();
    assert_eq!(ts.len(), 24);
    assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.');

    let batch = store(root.path(), "bob").read(&ReadOptions::default()).unwrap();
    let last = batch.messages.last().unwrap();
    assert_eq!(
        (
            last.from.as_str(),
            last.message_id.as_str(),
            last.timestamp.as_str()
        ),
        ("codex", sent.message_id.as_str(), ts)
    );
}

#[test]
fn send_is_idempotent_on_message_id() {
    let root = empty_root();
    let codex = store(root.path(), "codex");
    let id = ulid::Ulid::new();
    assert!(
        !codex
            .send_with_id("bob", "once", None, id)
            .unwrap()
            .already_present
    );
    assert!(
        codex
            .send_with_id("bob", "once", None, id)
            .unwrap()
            .already_present
    );
    // A fresh store (another process) has no memory of the file and still sees the id.
    assert!(
        store(root.path(), "codex")
            .send_with_id("bob", "once", None, id)
            .unwrap()
            .already_present
    );
    assert_eq!(records(&inbox(root.path(), "bob")).len(), 1);
}

#[test]
fn corrupt_inbox_is_never_overwritten() {
    let root = empty_root();
    let path = inbox(root.path(), "bob");
    std::fs::write(&path, "[{\"from\":\"x\",").unwrap();
    let err = store(root.path(), "codex").send("bob", "hi", None).unwrap_err();
    assert!(matches!(err, MailError::CorruptInbox { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("EOF"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[{\"from\":\"x\",");
    assert!(matches!(
        store(root.path(), "bob").pending_count(),
        Err(MailError::CorruptInbox { .. })
    ));
    assert!(!root.path().join("teams/demo/inboxes/bob.json.lock").exists());
}

#[test]
fn teams_must_exist_and_cross_team_mail_names_its_source() {
    let root = empty_root();
    let codex = store(root.path(), "codex");
    assert!(matches!(
        codex.send("bob@other", "x", None),
        Err(MailError::UnknownTeam { .. })
    ));
    std::fs::create_dir_all(root.path().join("teams/other")).unwrap();
    codex.send("bob@other", "x", None).unwrap();
    let rec = records(&root.path().join("teams/other/inboxes/bob.json"))
        .pop()
        .unwrap();
    assert_eq!(rec["metadata"]["atm"]["sourceTeam"], "demo");
}

#[test]
fn broadcast_reaches_every_member_but_the_sender_with_own_ids() {
    let root = v112_root();
    let report = store(root.path(), "alice").broadcast("all hands", None).unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let recipients: Vec<_> = report.sent.iter().map(|s| s.recipient.as_str()).collect();
    assert_eq!(recipients, ["team-lead@demo", "bob@demo"]);
    assert_ne!(report.sent[0].message_id, report.sent[1].message_id);
    let last = records(&inbox(root.path(), "team-lead")).pop().unwrap();
    assert_eq!(
        (last["from"].as_str(), last["text"].as_str()),
        (Some("alice"), Some("all hands"))
    );
    assert_eq!(
        records(&inbox(root.path(), "alice")).len(),
        1,
        "the sender's own inbox is untouched"
    );
}

#[test]
fn system_traffic_is_skipped_unless_asked_for() {
    let root = empty_root();
    let idle = json!({"type": "idle_notification", "from": "bob", "idleReason": "available"}).to_string();
    std::fs::write(
        inbox(root.path(), "codex"),
        serde_json::to_string_pretty(&json!([
            {"from": "bob", "text": idle, "timestamp": "2026-01-01T00:00:00.000Z", "read": false},
            {"from": "bob", "text": "real", "timestamp": "2026-01-01T00:00:01.000Z", "read": false},
        ]))
        .unwrap(),
    )
    .unwrap();
    let codex = store(root.path(), "codex");
    assert_eq!(codex.pending_count().unwrap(), 1);
    let batch = codex.read(&ReadOptions::default()).unwrap();
    assert_eq!(batch.messages.len(), 1);
    assert_eq!(batch.messages[0].message, "real");
    let all = codex
        .read(&ReadOptions {
            include_system: true,
            ..ReadOptions::default()
        })
        .unwrap();
    assert_eq!(all.messages.len(), 2);
}
