//! A registry file that cannot be read is reported with its path and hides no other file.

use crate::child;

#[test]
fn a_corrupt_file_is_reported_and_the_others_still_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = child::patient(tmp.path());
    reg.update("a@t", "s1", |_| Some(child::entry("s1", "/w", 1)))
        .unwrap();
    reg.update("c@t", "s3", |_| Some(child::entry("s3", "/w", 3)))
        .unwrap();
    std::fs::write(reg.file("b@t"), "{\"version\": 1, \"sessions\": ").unwrap();
    // One unreadable entry in an otherwise good file.
    std::fs::write(
        reg.file("d@t"),
        r#"{"version": 2, "sessions": {"bad": {"sessionId": 5}, "s4": {"sessionId": "s4", "cwd": "/w",
            "startedAt": "x", "lastActive": "x", "status": "idle"}}}"#,
    )
    .unwrap();
    // Temporary files a killed writer left are not registry files.
    std::fs::write(reg.dir().join(".tmp-123"), "junk").unwrap();

    let listing = reg.all().unwrap();
    let ids: Vec<_> = listing
        .entries
        .iter()
        .map(|l| l.entry.session_id.as_str())
        .collect();
    assert_eq!(ids, ["s1", "s3", "s4"]);
    assert_eq!(listing.problems.len(), 2, "{:?}", listing.problems);
    let b = reg.file("b@t").display().to_string();
    assert!(listing.problems[0].contains(&b), "{}", listing.problems[0]);
    assert!(listing.problems[0].contains("EOF"), "{}", listing.problems[0]);
    assert!(listing.problems[1].contains("d@t.json") && listing.problems[1].contains("`bad`"));
    assert_eq!(reg.find("s4").unwrap().unwrap().key, "d@t");
}

#[test]
fn a_missing_registry_is_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let listing = child::patient(&tmp.path().join("nowhere")).all().unwrap();
    assert!(listing.entries.is_empty() && listing.problems.is_empty());
}
