//! A journal whose writes fail for real: the file is grown (sparse) to the largest size its
//! file system allows, so every append fails with `EFBIG` as a full disk fails with `ENOSPC`,
//! until it is cut back. No root, no special file system, the real `write(2)`.

use std::fs::OpenOptions;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate};

use super::super::{JournalNews, Record, read};
use super::*;

const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

fn text(s: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(s)))
}

/// Grows the file at `path` to the largest size its file system allows (a hole, no blocks),
/// so appending to it fails; returns that size.
fn fill_to_the_limit(path: &Path) -> u64 {
    let file = OpenOptions::new().write(true).open(path).unwrap();
    let (mut ok, mut too_big) = (file.metadata().unwrap().len(), i64::MAX as u64);
    while too_big - ok > 1 {
        let mid = ok + (too_big - ok) / 2;
        if file.set_len(mid).is_ok() {
            ok = mid;
        } else {
            too_big = mid;
        }
    }
    file.set_len(ok).unwrap();
    ok
}

fn cut_back(path: &Path, len: u64) {
    OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Everything the journal's listener heard.
fn listen(journal: &Journal) -> Arc<Mutex<Vec<JournalNews>>> {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let keep = heard.clone();
    journal.listen(Box::new(move |news| keep.lock().unwrap().push(news.clone())));
    heard
}

#[test]
fn a_record_that_cannot_be_written_is_lost_not_the_journal_and_the_gap_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, Path::new("/w"), DEFAULT_LIMIT).unwrap();
    let heard = listen(&j);
    j.prompt(1, &[ContentBlock::from("one")], false);
    let good = std::fs::metadata(j.path()).unwrap().len();
    fill_to_the_limit(j.path());
    j.update(&text("lost 1"));
    j.update(&text("lost 2"));
    assert_eq!(j.lost(), 2);
    let failing = heard.lock().unwrap().clone();
    assert_eq!(failing.len(), 1, "told once: {failing:?}");
    assert!(
        matches!(&failing[0], JournalNews::Failing { error } if error.contains("too large")),
        "{failing:?}"
    );
    cut_back(j.path(), good);
    j.update(&text("kept"));
    j.turn_end(1, "end_turn", None);
    assert_eq!(
        heard.lock().unwrap().last(),
        Some(&JournalNews::Recovered { lost: 2 })
    );
    assert_eq!(j.lost(), 2);
    let history = read(dir.path(), ID).unwrap();
    assert!(history.skipped.is_empty(), "{:?}", history.skipped);
    let kinds: Vec<String> = history
        .records
        .iter()
        .map(|r| match r {
            Record::Lost { count, error, .. } => format!("lost {count}: {error}"),
            Record::Update { .. } => "update".into(),
            Record::Prompt { .. } => "prompt".into(),
            Record::TurnEnd { .. } => "turn end".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert_eq!(kinds[0], "prompt");
    assert!(
        kinds[1].starts_with("lost 2: ") && kinds[1].contains("too large"),
        "{kinds:?}"
    );
    assert_eq!(kinds[2..], ["update", "turn end"]);
}

#[test]
fn a_write_that_fails_midway_is_cut_off_so_no_line_is_torn() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, Path::new("/w"), DEFAULT_LIMIT).unwrap();
    let good = std::fs::metadata(j.path()).unwrap().len();
    // Room for 10 bytes of the next line, then the limit.
    let limit = fill_to_the_limit(j.path());
    cut_back(j.path(), limit - 10);
    j.update(&text("this line does not fit in ten bytes"));
    assert_eq!(j.lost(), 1);
    assert_eq!(
        std::fs::metadata(j.path()).unwrap().len(),
        good,
        "the part written is cut off again"
    );
    j.update(&text("after"));
    let history = read(dir.path(), ID).unwrap();
    assert!(history.skipped.is_empty(), "{:?}", history.skipped);
    assert!(matches!(history.records[0], Record::Lost { count: 1, .. }));
    assert_eq!(history.records.len(), 2);
}

#[test]
fn news_before_anyone_listens_is_told_to_the_first_listener() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, Path::new("/w"), DEFAULT_LIMIT).unwrap();
    fill_to_the_limit(j.path());
    j.update(&text("lost"));
    let heard = listen(&j);
    assert!(matches!(
        heard.lock().unwrap().as_slice(),
        [JournalNews::Failing { .. }]
    ));
}

#[test]
fn a_record_over_the_line_limit_is_left_out_and_marked_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), ID, Path::new("/w"), DEFAULT_LIMIT).unwrap();
    j.line_limit = 200;
    let heard = listen(&j);
    j.update(&text(&"x".repeat(300)));
    j.update(&text("fits"));
    assert_eq!(j.lost(), 1);
    assert!(heard.lock().unwrap().is_empty(), "no write failed");
    let history = read(dir.path(), ID).unwrap();
    match &history.records[..] {
        [Record::Lost { count: 1, error, .. }, Record::Update { .. }] => {
            assert!(error.contains("over the line limit of 200 bytes"), "{error}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_journal_reopened_after_a_torn_line_starts_on_a_line_of_its_own() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, Path::new("/w"), DEFAULT_LIMIT).unwrap();
    let path = j.path().to_owned();
    drop(j);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"t\":\"update\",\"u\":{\"sessionUpd").unwrap();
    let session = SessionDir::open(dir.path(), ID).unwrap();
    let j = Journal::reopen(&session, session.hold().unwrap(), DEFAULT_LIMIT, None).unwrap();
    j.update(&text("after"));
    let history = read(dir.path(), ID).unwrap();
    assert!(
        matches!(
            &history.records[..],
            [Record::Reopened { .. }, Record::Update { .. }]
        ),
        "{:?}",
        history.records
    );
    assert_eq!(
        history.skipped.len(),
        1,
        "the torn line alone: {:?}",
        history.skipped
    );
}
