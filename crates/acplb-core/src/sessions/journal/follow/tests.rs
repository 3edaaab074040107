//! Following a journal: torn lines, a journal that appears later, a writer racing the reader.

use std::io::Write as _;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};

use super::super::{History, read, render};
use super::*;

const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

fn line(record: &Record) -> String {
    format!("{}\n", serde_json::to_string(record).unwrap())
}

fn header_line() -> String {
    line(&Record::Open {
        format: super::super::FORMAT,
        session_id: ID.into(),
        cwd: "/w".into(),
        at: "2026-01-01T00:00:00.000Z".into(),
        meta: serde_json::Map::new(),
    })
}

fn update(u: SessionUpdate) -> Record {
    Record::Update { u: Box::new(u) }
}

fn text(s: &str) -> Record {
    update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
        ContentBlock::from(s),
    )))
}

/// The records of turn `n`: a prompt, a message streamed in two chunks, a tool call and its end.
fn turn(n: u64) -> Vec<Record> {
    vec![
        Record::Prompt {
            turn: n,
            at: format!("2026-01-01T00:00:{:02}.000Z", n % 60),
            prompt: vec![ContentBlock::from(format!("question {n}"))],
            steered: false,
        },
        text(&format!("answer {n}, ")),
        text("streamed"),
        update(SessionUpdate::ToolCall(
            ToolCall::new(format!("c{n}"), format!("tool {n}")).status(ToolCallStatus::InProgress),
        )),
        update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            format!("c{n}"),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Completed)
                .content(vec![ContentBlock::from(format!("output {n}")).into()]),
        ))),
        Record::TurnEnd {
            turn: n,
            at: format!("2026-01-01T00:01:{:02}.000Z", n % 60),
            stop: "end_turn".into(),
            error: None,
        },
    ]
}

/// The next lines, each whole.
fn whole(follower: &mut Follower) -> Vec<Vec<u8>> {
    follower
        .next_lines()
        .unwrap()
        .into_iter()
        .map(|line| match line {
            crate::transport::Frame::Line(text) => text.into_bytes(),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn append(path: &Path, bytes: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(bytes.as_bytes()).unwrap();
}

#[test]
fn a_torn_line_waits_for_its_newline_and_a_missing_journal_for_its_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session").join("journal.jsonl");
    let mut follower = Follower::new(&path);
    assert!(follower.next_lines().unwrap().is_empty(), "no folder yet");
    std::fs::create_dir(dir.path().join("session")).unwrap();
    assert!(follower.next_lines().unwrap().is_empty(), "no file yet");

    let header = header_line();
    let first = line(&text("one"));
    let (head, tail) = first.split_at(10);
    append(&path, &format!("{header}{head}"));
    assert_eq!(whole(&mut follower), [header.trim_end().as_bytes()]);
    assert!(
        follower.next_lines().unwrap().is_empty(),
        "the torn line is held back"
    );
    let second = line(&text("two"));
    append(&path, &format!("{tail}{second}"));
    assert_eq!(
        whole(&mut follower),
        [first.trim_end().as_bytes(), second.trim_end().as_bytes()]
    );
    append(&path, "\n");
    assert_eq!(whole(&mut follower), [b"".as_slice()]);
}

#[test]
fn a_write_wakes_a_waiting_follower() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    append(&path, &header_line());
    let mut follower = Follower::new(&path);
    assert_eq!(follower.next_lines().unwrap().len(), 1);
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || append(&path, &line(&text("more"))))
    };
    // A wake-up that comes before the wait is kept for it, so the order does not matter; only
    // a missing file event would make this wait the whole minute.
    let start = std::time::Instant::now();
    follower.wait(Duration::from_secs(60));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "woken by the file event"
    );
    writer.join().unwrap();
    assert_eq!(follower.next_lines().unwrap().len(), 1);
}

#[test]
fn records_render_one_at_a_time_as_the_whole_history_does() {
    let mut history = History {
        session_id: ID.into(),
        cwd: "/w".into(),
        started_at: "then".into(),
        ..History::default()
    };
    history.records = (1..=3).flat_map(turn).collect();
    history.records.insert(2, Record::Mode { id: "plan".into() });
    history.records.push(text("left open"));
    let mut pieces = String::new();
    Renderer::header(&mut pieces, ID, Path::new("/w"), "then");
    let mut renderer = Renderer::new();
    for record in &history.records {
        let mut piece = String::new();
        renderer.record(&mut piece, record);
        pieces.push_str(&piece);
    }
    let mut end = String::new();
    renderer.finish(&mut end);
    assert_eq!(end, "\n", "the open message is ended");
    pieces.push_str(&end);
    assert_eq!(pieces, render(&history));
}

#[test]
fn follow_prints_every_record_once_in_order_while_it_is_written() {
    const TURNS: u64 = 40;
    let dir = tempfile::tempdir().unwrap();
    let path = crate::sessions::state::journal_path(dir.path(), ID);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, stop) = (path.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .unwrap();
            file.write_all(header_line().as_bytes()).unwrap();
            for record in (1..=TURNS).flat_map(turn) {
                // Each line in two writes, so the reader may find it torn.
                let line = line(&record);
                let (head, tail) = line.split_at(line.len() / 2);
                file.write_all(head.as_bytes()).unwrap();
                std::thread::yield_now();
                file.write_all(tail.as_bytes()).unwrap();
            }
            stop.store(true, Ordering::SeqCst);
        })
    };
    let mut out = Vec::new();
    follow(&path, &mut out, &stop).unwrap();
    writer.join().unwrap();
    let shown = String::from_utf8(out).unwrap();
    assert_eq!(shown, render(&read(dir.path(), ID).unwrap()));
    for n in 1..=TURNS {
        assert_eq!(
            shown.matches(&format!("\n> question {n}\n")).count(),
            1,
            "{shown}"
        );
        assert_eq!(shown.matches(&format!("answer {n}, streamed\n")).count(), 1);
    }
}

#[test]
fn a_damaged_line_is_noted_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let tail = line(&Record::Mode { id: "plan".into() });
    append(&path, &format!("{}{{\"t\":\"nope\"}}\n{tail}", header_line()));
    // Stopped before it starts: what is on disk is still printed.
    let stop = AtomicBool::new(true);
    let mut out = Vec::new();
    follow(&path, &mut out, &stop).unwrap();
    let shown = String::from_utf8(out).unwrap();
    let body = shown.split_once("started 2026-01-01T00:00:00.000Z\n").unwrap().1;
    assert!(
        body.starts_with("! skipped line 2: unknown variant `nope`"),
        "{shown}"
    );
    assert!(body.ends_with("\n· mode: plan\n"), "{shown}");
}

#[test]
fn a_file_that_is_not_a_journal_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    append(&path, "hello\n");
    let stop = AtomicBool::new(true);
    let err = follow(&path, &mut Vec::new(), &stop).unwrap_err();
    assert!(matches!(err, JournalError::NotAJournal { .. }), "{err}");
}
