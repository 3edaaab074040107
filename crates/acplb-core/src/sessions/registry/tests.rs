//! Unit tests of single-file updates: what is written, what is kept, locks and conflicts.

use std::os::unix::fs::PermissionsExt as _;
use std::time::{Duration, UNIX_EPOCH};

use super::*;

fn entry(id: &str) -> Entry {
    Entry::new(id, "/w", UNIX_EPOCH + Duration::from_secs(1_000))
}

fn raw(reg: &Registry, key: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(reg.file(key)).unwrap()).unwrap()
}

#[test]
fn an_update_creates_private_files_and_counts_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(&tmp.path().join("state"));
    reg.update("a@t", "s1", |_| Some(entry("s1"))).unwrap();
    reg.update("a@t", "s2", |_| Some(entry("s2"))).unwrap();
    let v = raw(&reg, "a@t");
    assert_eq!(v["version"], 2);
    assert_eq!(v["sessions"]["s1"]["sessionId"], "s1");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&reg.file("a@t")), 0o600);
    assert_eq!(mode(&file::lock_path(&reg.file("a@t"))), 0o600);
    assert_eq!(mode(reg.dir()), 0o700);
    // Removing, and a change that changes nothing, write only what differs.
    reg.update("a@t", "s1", |_| None).unwrap();
    reg.update("a@t", "gone", |_| None).unwrap();
    reg.update("a@t", "s2", |old| old).unwrap();
    let v = raw(&reg, "a@t");
    assert_eq!(v["version"], 3);
    assert!(v["sessions"].get("s1").is_none());
    let found = reg.find("s2").unwrap().unwrap();
    assert_eq!((found.key.as_str(), found.entry), ("a@t", entry("s2")));
    assert_eq!(reg.find("s1").unwrap(), None);
}

#[test]
fn fields_and_statuses_a_newer_acplb_wrote_survive_an_update() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    std::fs::create_dir_all(reg.dir()).unwrap();
    let mut stored = serde_json::to_value(entry("s1")).unwrap();
    stored["colour"] = "blue".into();
    let doc = serde_json::json!({"version": 7, "sessions": {"s1": stored}, "format": "v2"});
    std::fs::write(reg.file("k"), doc.to_string()).unwrap();
    reg.update("k", "s1", |old| {
        let mut e = old.unwrap();
        e.title = Some("hello".into());
        Some(e)
    })
    .unwrap();
    let v = raw(&reg, "k");
    assert_eq!(v["version"], 8);
    assert_eq!(v["format"], "v2");
    assert_eq!(v["sessions"]["s1"]["colour"], "blue");
    assert_eq!(v["sessions"]["s1"]["title"], "hello");
}

#[test]
fn bad_keys_are_refused_before_anything_is_created() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(&tmp.path().join("state"));
    for key in ["../x", ".hidden", "a/b", ""] {
        let err = reg.update(key, "s", |_| Some(entry("s"))).unwrap_err();
        assert!(matches!(err, RegistryError::BadKey { .. }), "{err}");
    }
    assert!(!reg.dir().exists());
}

#[test]
fn a_corrupt_file_is_not_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    std::fs::create_dir_all(reg.dir()).unwrap();
    std::fs::write(reg.file("k"), "{not json").unwrap();
    let err = reg.update("k", "s", |_| Some(entry("s"))).unwrap_err();
    assert!(matches!(err, RegistryError::Parse { .. }), "{err}");
    assert!(err.to_string().contains("k.json"), "{err}");
    assert_eq!(std::fs::read_to_string(reg.file("k")).unwrap(), "{not json");
}

#[test]
fn a_held_lock_makes_a_write_give_up_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path()).with_lock_wait(Duration::from_millis(50));
    reg.update("k", "s", |_| Some(entry("s"))).unwrap();
    let mut other = fd_lock::RwLock::new(std::fs::File::open(file::lock_path(&reg.file("k"))).unwrap());
    let held = other.try_write().unwrap();
    let err = reg.update("k", "t", |_| Some(entry("t"))).unwrap_err();
    assert!(matches!(err, RegistryError::LockTimeout { .. }), "{err}");
    assert!(err.to_string().contains("k.json.lock"), "{err}");
    drop(held);
    reg.update("k", "t", |_| Some(entry("t"))).unwrap();
    assert_eq!(raw(&reg, "k")["version"], 2);
}

#[test]
fn a_writer_that_skips_the_lock_makes_the_update_start_over() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    reg.update("k", "s", |_| Some(entry("s"))).unwrap();
    let path = reg.file("k");
    let mut rounds = 0;
    reg.update("k", "t", |_| {
        rounds += 1;
        if rounds == 1 {
            // A foreign writer replaces the file between this round's read and its rename.
            let mut v = raw(&reg, "k");
            v["version"] = 2.into();
            v["sessions"]["foreign"] = serde_json::to_value(entry("foreign")).unwrap();
            std::fs::write(&path, v.to_string()).unwrap();
        }
        Some(entry("t"))
    })
    .unwrap();
    assert_eq!(rounds, 2);
    let v = raw(&reg, "k");
    assert_eq!(v["version"], 3);
    let ids: Vec<_> = v["sessions"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(ids, ["foreign", "s", "t"]);
}

#[test]
fn a_file_that_never_settles_is_a_conflict() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    reg.update("k", "s", |_| Some(entry("s"))).unwrap();
    let path = reg.file("k");
    let mut version = 1;
    let err = reg
        .update("k", "t", |_| {
            version += 1;
            std::fs::write(&path, format!(r#"{{"version": {version}, "sessions": {{}}}}"#)).unwrap();
            Some(entry("t"))
        })
        .unwrap_err();
    assert!(matches!(err, RegistryError::Conflict { tries: 8, .. }), "{err}");
}

#[test]
fn the_writer_applies_changes_in_order_and_flushes() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    let writer = RegistryWriter::start(reg.clone()).unwrap();
    let mut e = entry("s");
    e.identity = Some("arch".into());
    writer.send(Change::upsert(e.clone()));
    writer.send(Change::new("arch", "s", Op::Status(Status::Idle)));
    writer.send(Change::new("arch", "s", Op::ThreadId("th-1".into())));
    writer.send(Change::new("arch", "s", Op::Title(Some("fix the bug".into()))));
    let later = UNIX_EPOCH + Duration::from_secs(5_000);
    writer.send(Change::new("arch", "s", Op::Touch(later)));
    writer.send(Change::new(
        "arch",
        "s",
        Op::Edit(Box::new(|e| e.tag = Some("x".into()))),
    ));
    writer.send(Change::new("arch", "missing", Op::Status(Status::Closed)));
    writer.send(Change::upsert(entry("local")));
    writer.send(Change::new(LOCAL_KEY, "local", Op::Remove));
    writer.send(Change::new("../bad", "s", Op::Remove));
    writer.flush_blocking();
    let listing = reg.all().unwrap();
    assert_eq!(listing.problems, Vec::<String>::new());
    let got: Vec<_> = listing
        .entries
        .iter()
        .map(|l| (l.key.as_str(), &l.entry))
        .collect();
    let want = Entry {
        status: Status::Idle,
        thread_id: Some("th-1".into()),
        title: Some("fix the bug".into()),
        last_active: timestamp(later),
        tag: Some("x".into()),
        ..e
    };
    assert_eq!(got, [("arch", &want)]);
    // The refused change above did not stop the thread.
    writer.send(Change::upsert(entry("next")));
    writer.flush_blocking();
    assert!(reg.find("next").unwrap().is_some());
}

#[tokio::test]
async fn flush_is_a_future_that_waits_for_earlier_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = Registry::new(tmp.path());
    let writer = RegistryWriter::start(reg.clone()).unwrap();
    for i in 0..100 {
        writer.send(Change::upsert(entry(&format!("s{i}"))));
    }
    let flushed = writer.flush();
    writer.send(Change::upsert(entry("after")));
    tokio::time::timeout(Duration::from_secs(10), flushed)
        .await
        .unwrap();
    let ids: Vec<_> = reg
        .all()
        .unwrap()
        .into_entries()
        .into_iter()
        .map(|e| e.session_id)
        .collect();
    assert!((0..100).all(|i| ids.contains(&format!("s{i}"))), "{ids:?}");
    drop(writer);
}
