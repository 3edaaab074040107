//! At-least-once reading: nothing is marked read until the receipt is committed.

use acplb_atm::{MailError, ReadOptions};

use crate::util::{empty_root, fixture, inbox, records, store, v112_root};

#[test]
fn read_without_commit_redelivers() {
    let root = empty_root();
    store(root.path(), "alice").send("bob", "one", None).unwrap();
    store(root.path(), "alice").send("bob", "two", None).unwrap();
    let bob = store(root.path(), "bob");
    let first = bob.read(&ReadOptions::default()).unwrap();
    assert_eq!(first.messages.len(), 2);
    // The process "crashes" before committing: a new store (fresh process) gets the same mail.
    drop(first);
    let again = store(root.path(), "bob").read(&ReadOptions::default()).unwrap();
    let texts: Vec<_> = again.messages.iter().map(|m| m.message.as_str()).collect();
    assert_eq!(texts, ["one", "two"]);
    assert!(
        records(&inbox(root.path(), "bob"))
            .iter()
            .all(|r| r["read"] == false)
    );
}

#[test]
fn commit_marks_exactly_the_delivered_messages() {
    let root = empty_root();
    let alice = store(root.path(), "alice");
    for i in 0..3 {
        alice.send("bob", &format!("m{i}"), None).unwrap();
    }
    let bob = store(root.path(), "bob");
    let batch = bob
        .read(&ReadOptions {
            max_messages: 2,
            ..ReadOptions::default()
        })
        .unwrap();
    assert_eq!(batch.remaining, 1);
    // Mail arriving between read and commit stays unread.
    alice.send("bob", "late", None).unwrap();
    assert_eq!(bob.commit(&batch.receipt).unwrap(), 2);
    assert_eq!(
        bob.commit(&batch.receipt).unwrap(),
        0,
        "committing twice changes nothing"
    );
    let left: Vec<_> = bob
        .read(&ReadOptions::default())
        .unwrap()
        .messages
        .into_iter()
        .map(|m| m.message)
        .collect();
    assert_eq!(left, ["m2", "late"]);
    let flags: Vec<_> = records(&inbox(root.path(), "bob"))
        .iter()
        .map(|r| r["read"].as_bool().unwrap())
        .collect();
    assert_eq!(flags, [true, true, false, false]);
    assert_eq!(bob.pending_count().unwrap(), 2);
}

/// Marking is by key: a record moved to another index (someone pruned the inbox) is still found,
/// and only the `read` bytes of foreign records change.
#[test]
fn commit_matches_by_key_and_edits_only_the_flag() {
    let root = v112_root();
    let bob = store(root.path(), "bob");
    let path = inbox(root.path(), "bob");
    let batch = bob
        .read(&ReadOptions {
            max_messages: 1,
            ..ReadOptions::default()
        })
        .unwrap();
    assert_eq!(batch.receipt.message_ids(), ["01M80K6HVXY946P0AB3J0BCP0Z"]);
    // Drop the first record behind the reader's back, shifting every index.
    let mut recs = records(&path);
    let first = recs.remove(0);
    recs.push(first);
    std::fs::write(&path, serde_json::to_string_pretty(&recs).unwrap()).unwrap();
    let before = std::fs::read_to_string(&path).unwrap();
    assert_eq!(bob.commit(&batch.receipt).unwrap(), 1);
    let after = std::fs::read_to_string(&path).unwrap();
    let marked = records(&path);
    assert_eq!(
        marked[3]["metadata"]["atm"]["messageId"],
        "01M80K6HVXY946P0AB3J0BCP0Z"
    );
    assert_eq!(marked[3]["read"], true);
    assert_eq!(marked.iter().filter(|r| r["read"] == true).count(), 2);
    // Exactly one `false` became `true`; nothing else moved.
    assert_eq!(after.len() + 1, before.len());
    let at = before
        .bytes()
        .zip(after.bytes())
        .position(|(a, b)| a != b)
        .unwrap();
    assert_eq!((&before[at..at + 5], &after[at..at + 4]), ("false", "true"));
    assert_eq!(before[at + 5..], after[at + 4..]);
}

#[test]
fn native_records_commit_by_content_key() {
    let root = empty_root();
    std::fs::copy(fixture("claude-native/bob.json"), inbox(root.path(), "bob")).unwrap();
    let bob = store(root.path(), "bob");
    let batch = bob.read(&ReadOptions::default()).unwrap();
    assert_eq!(bob.commit(&batch.receipt).unwrap(), 1);
    assert_eq!(bob.pending_count().unwrap(), 0);
    let text = std::fs::read_to_string(inbox(root.path(), "bob")).unwrap();
    let original = std::fs::read_to_string(fixture("claude-native/bob.json")).unwrap();
    assert_eq!(text, original.replace("\"read\": false", "\"read\": true"));
}

#[test]
fn receipts_belong_to_their_store_and_truncation_is_visible() {
    let root = empty_root();
    store(root.path(), "alice")
        .send("bob", &"z".repeat(5000), None)
        .unwrap();
    let batch = store(root.path(), "bob").read(&ReadOptions::default()).unwrap();
    let msg = &batch.messages[0].message;
    assert!(
        msg.starts_with(&"z".repeat(4096)) && msg.ends_with(" [...truncated 904 chars]"),
        "{}",
        &msg[4000..]
    );
    assert!(matches!(
        store(root.path(), "alice").commit(&batch.receipt),
        Err(MailError::ForeignReceipt { .. })
    ));
}
