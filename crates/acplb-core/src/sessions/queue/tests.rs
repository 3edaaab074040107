//! The queue's life cycle in one process: send, list, claim, settle, recover, set aside.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;

const BOB: &str = "bob@core";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

fn age(path: &Path, by: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - by).unwrap();
}

/// A message file written by hand, as another program might.
fn drop_file(dir: &Path, id: MessageId, sent_at: &str, text: &str) {
    let json = format!(r#"{{"id":"{id}","text":"{text}","sentAt":"{sent_at}"}}"#);
    std::fs::write(dir.join(format!("{id}.json")), json).unwrap();
}

#[test]
fn send_list_claim_done() {
    let state = tempfile::tempdir().unwrap();
    let id = send(state.path(), BOB, Some("alice@core"), "hello bob").unwrap();
    let dir = queue_dir(state.path(), BOB);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(names(&dir), [format!("{id}.json")]);
    assert_eq!(mode(&dir.join(format!("{id}.json"))), 0o600);

    let mut q = Queue::open(state.path(), BOB).unwrap();
    let pending = q.pending().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (
            pending[0].id,
            pending[0].from.as_deref(),
            pending[0].text.as_str()
        ),
        (id, Some("alice@core"), "hello bob")
    );

    let claim = q.claim_next().unwrap().unwrap();
    assert_eq!(claim.message(), &pending[0]);
    assert_eq!(names(&dir), [format!("{id}.claimed")]);
    assert!(q.pending().unwrap().is_empty());
    assert_eq!(q.claimed().unwrap(), pending);
    assert!(
        q.claim_next().unwrap().is_none(),
        "a claimed message is not claimed twice"
    );

    claim.done().unwrap();
    assert!(names(&dir).is_empty());
    assert!(q.claim_next().unwrap().is_none());
}

#[test]
fn a_released_or_dropped_claim_waits_again() {
    let state = tempfile::tempdir().unwrap();
    let id = send(state.path(), "sess-1", None, "hi").unwrap();
    let mut q = Queue::open(state.path(), "sess-1").unwrap();
    q.claim_next().unwrap().unwrap().release().unwrap();
    assert_eq!(q.pending().unwrap()[0].id, id);
    let claim = q.claim_next().unwrap().unwrap();
    assert_eq!(claim.message().id, id);
    drop(claim);
    assert_eq!(q.pending().unwrap()[0].id, id);
    assert!(q.claimed().unwrap().is_empty());
}

#[test]
fn oldest_first_then_by_id() {
    let state = tempfile::tempdir().unwrap();
    let mut q = Queue::open(state.path(), BOB).unwrap();
    let mut same: Vec<MessageId> = (0..3).map(|_| MessageId::new()).collect();
    let (old, new) = (MessageId::new(), MessageId::new());
    drop_file(q.dir(), new, "2026-03-01T00:00:00.000Z", "new");
    for id in &same {
        drop_file(q.dir(), *id, "2026-02-01T00:00:00.500Z", "same");
    }
    drop_file(q.dir(), old, "2026-01-01T00:00:00Z", "old");
    same.sort();
    let mut want = vec![old];
    want.extend(&same);
    want.push(new);

    let listed: Vec<MessageId> = q.pending().unwrap().iter().map(|m| m.id).collect();
    assert_eq!(listed, want);
    let mut claimed = Vec::new();
    while let Some(c) = q.claim_next().unwrap() {
        claimed.push(c.message().id);
        c.done().unwrap();
    }
    assert_eq!(claimed, want);
}

#[test]
fn stale_claims_are_taken_back_fresh_ones_are_not() {
    let state = tempfile::tempdir().unwrap();
    // Sent long ago: the claim's age must start at the claim, not at the send.
    let id = send(state.path(), BOB, None, "hi").unwrap();
    let mut q = Queue::open(state.path(), BOB).unwrap();
    age(&q.dir().join(format!("{id}.json")), Duration::from_secs(3600));
    let claim = q.claim_next().unwrap().unwrap();
    assert_eq!(q.recover_stale(Duration::from_secs(60)).unwrap(), 0);

    // Its consumer "died": the claim grows old.
    age(&claim.path(), Duration::from_secs(120));
    let tmp = q.dir().join(".tmp-abandoned");
    std::fs::write(&tmp, "half").unwrap();
    age(&tmp, Duration::from_secs(120));
    assert_eq!(q.recover_stale(Duration::from_secs(60)).unwrap(), 1);
    assert_eq!(q.pending().unwrap()[0].id, id);
    assert!(!tmp.exists(), "an abandoned temp file is removed");

    // The slow consumer learns its claim is gone; the message is not lost.
    assert!(matches!(claim.done(), Err(QueueError::ClaimLost { .. })));
    assert_eq!(q.pending().unwrap()[0].id, id);
    assert_eq!(q.claim_next().unwrap().unwrap().message().id, id);
}

#[test]
fn the_one_consumer_takes_back_every_claim_but_not_a_fresh_temp_file() {
    let state = tempfile::tempdir().unwrap();
    let id = send(state.path(), BOB, None, "hi").unwrap();
    let mut q = Queue::open(state.path(), BOB).unwrap();
    let claim = q.claim_next().unwrap().unwrap();
    let writing = q.dir().join(".tmp-being-written");
    std::fs::write(&writing, "half").unwrap();
    assert_eq!(q.take_back_claims(Duration::from_secs(60)).unwrap(), 1);
    assert_eq!(q.pending().unwrap()[0].id, id);
    assert!(writing.exists(), "a sender may still be writing it");
    std::mem::forget(claim); // its file is gone; its drop would only warn
}

#[test]
fn damaged_files_are_set_aside_and_others_ignored() {
    let state = tempfile::tempdir().unwrap();
    let mut q = Queue::open(state.path(), BOB).unwrap();
    let (garbled, huge, wrong_id) = (MessageId::new(), MessageId::new(), MessageId::new());
    std::fs::write(q.dir().join(format!("{garbled}.json")), "{not json").unwrap();
    let f = std::fs::File::create(q.dir().join(format!("{huge}.json"))).unwrap();
    f.set_len(message::MAX_FILE_BYTES + 1).unwrap();
    drop_file(q.dir(), MessageId::new(), "2026-01-01T00:00:00Z", "x");
    std::fs::rename(
        q.dir().join(format!("{}.json", q.pending().unwrap()[0].id)),
        q.dir().join(format!("{wrong_id}.json")),
    )
    .unwrap();
    for other in ["notes.txt", "README.json", ".tmp-123", "x.claimed"] {
        std::fs::write(q.dir().join(other), "{}").unwrap();
    }
    let good = send(state.path(), BOB, None, "good").unwrap();

    assert_eq!(q.pending().unwrap().len(), 1, "damaged files are not listed");
    let claim = q.claim_next().unwrap().unwrap();
    assert_eq!(claim.message().id, good);
    claim.done().unwrap();
    assert!(q.claim_next().unwrap().is_none());
    let mut want = vec![
        format!("{garbled}.bad"),
        format!("{huge}.bad"),
        format!("{wrong_id}.bad"),
        ".tmp-123".to_owned(),
        "README.json".to_owned(),
        "notes.txt".to_owned(),
        "x.claimed".to_owned(),
    ];
    want.sort();
    assert_eq!(names(q.dir()), want);
}

#[test]
fn refused_sends_leave_nothing_behind() {
    let state = tempfile::tempdir().unwrap();
    let err = send(state.path(), "../x", None, "hi").unwrap_err();
    assert!(matches!(err, QueueError::BadTarget { .. }), "{err}");
    assert!(matches!(
        send(state.path(), BOB, None, "  "),
        Err(QueueError::Empty)
    ));
    let big = "x".repeat(MAX_TEXT_BYTES + 1);
    let err = send(state.path(), BOB, None, &big).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the message is {} bytes, more than the {MAX_TEXT_BYTES} bytes a queue message may hold",
            MAX_TEXT_BYTES + 1
        )
    );
    assert!(!queues_dir(state.path()).exists());
    assert!(Queue::open(state.path(), "a/b").is_err());
}

/// Runs `f` on a thread of its own and fails the test if it takes over 10 s (a blocked open).
fn within_10s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()).unwrap());
    rx.recv_timeout(Duration::from_secs(10))
        .expect("blocked: a queue file was opened without O_NONBLOCK")
}

#[test]
fn things_that_are_not_files_are_set_aside_without_blocking() {
    let state = tempfile::tempdir().unwrap();
    let q = Queue::open(state.path(), BOB).unwrap();
    let dir = q.dir().to_owned();
    let [folder, fifo, link, link_to_fifo, claimed_folder] = [(); 5].map(|()| MessageId::new());
    std::fs::create_dir(dir.join(format!("{folder}.json"))).unwrap();
    std::fs::write(dir.join(format!("{folder}.json/inside")), "x").unwrap();
    let fifo_mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
    nix::unistd::mkfifo(&dir.join(format!("{fifo}.json")), fifo_mode).unwrap();
    // A valid message, but outside the queue: a link to it is not a message file.
    drop_file(state.path(), link, "2026-01-01T00:00:00Z", "linked");
    std::os::unix::fs::symlink(
        state.path().join(format!("{link}.json")),
        dir.join(format!("{link}.json")),
    )
    .unwrap();
    nix::unistd::mkfifo(&state.path().join("fifo"), fifo_mode).unwrap();
    std::os::unix::fs::symlink(
        state.path().join("fifo"),
        dir.join(format!("{link_to_fifo}.json")),
    )
    .unwrap();
    std::fs::create_dir(dir.join(format!("{claimed_folder}.claimed"))).unwrap();
    std::fs::create_dir(dir.join(".tmp-folder")).unwrap();
    let good = send(state.path(), BOB, None, "good").unwrap();

    let (q, listed) = within_10s(move || {
        let listed = q.pending().unwrap();
        (q, listed)
    });
    assert_eq!(
        listed.iter().map(|m| m.id).collect::<Vec<_>>(),
        [good],
        "only the message"
    );
    // Claims left behind are taken back whatever they are; a temp folder is left alone.
    assert_eq!(q.take_back_claims(Duration::ZERO).unwrap(), 1);
    let (mut q, first) = within_10s(move || {
        let mut q = q;
        let first = q.claim_next().unwrap();
        (q, first)
    });
    let first = first.expect("the message is claimed past the junk");
    assert_eq!(first.message().id, good);
    first.done().unwrap();
    assert!(q.claim_next().unwrap().is_none());
    let mut want: Vec<String> = [folder, fifo, link, link_to_fifo, claimed_folder]
        .iter()
        .map(|id| format!("{id}.bad"))
        .collect();
    want.push(".tmp-folder".to_owned());
    want.sort();
    assert_eq!(names(&dir), want);
    assert!(
        state.path().join(format!("{link}.json")).is_file(),
        "a link's target is left alone"
    );
}
