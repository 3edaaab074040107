//! The journal, end to end in a temporary folder: written, read back, repaired, replayed,
//! digested and shown as text.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionConfigOptionValue, SessionUpdate, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields,
};

use super::*;
use serde_json::json;

const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

fn text(s: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(s)))
}

fn open(dir: &std::path::Path) -> Journal {
    Journal::create(dir, ID, std::path::Path::new("/w"), DEFAULT_LIMIT).unwrap()
}

#[test]
fn a_session_reads_back_as_written_and_replays_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.prompt(1, &[ContentBlock::from("hello\nworld")], false);
    j.thread("th-1");
    j.thread("th-1");
    j.update(&text("hi "));
    j.update(&text("there"));
    j.turn_end(1, "end_turn", None);
    j.mode("full-access");
    j.setting("model", &SessionConfigOptionValue::value_id("gpt-5.5"));
    let history = read(dir.path(), ID).unwrap();
    assert_eq!(history.session_id, ID);
    assert!(history.skipped.is_empty());
    let facts = history.facts();
    assert_eq!(facts.thread_id.as_deref(), Some("th-1"));
    assert_eq!(facts.mode.as_deref(), Some("full-access"));
    assert_eq!(facts.settings.len(), 2);
    assert_eq!(facts.settings[0].0, "mode");
    assert_eq!(facts.turns, 1);
    assert_eq!(facts.open_turn, None);
    assert_eq!(facts.title.as_deref(), Some("hello"));
    // The thread id is written once.
    let threads = history
        .records
        .iter()
        .filter(|r| matches!(r, Record::Thread { .. }))
        .count();
    assert_eq!(threads, 1);
    let replay = updates(&history, false, false);
    assert_eq!(replay.len(), 3);
    assert!(matches!(&replay[0], SessionUpdate::UserMessageChunk(_)));
    assert_eq!(replay[1], text("hi "));
    assert_eq!(replay[2], text("there"));
    assert!(repair(&history).is_empty());
    let mode = std::fs::metadata(j.path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dmode = std::fs::metadata(j.path().parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dmode, 0o700);
}

#[test]
fn a_torn_last_line_is_skipped_and_damage_elsewhere_reported() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.update(&text("kept"));
    let path = j.path().to_owned();
    drop(j);
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"t\":\"update\",\"u\":{\"sessionUpd").unwrap();
    let history = read(dir.path(), ID).unwrap();
    assert_eq!(history.records.len(), 1);
    assert_eq!(history.skipped.len(), 1);
    assert!(history.skipped[0].contains("cut short"), "{:?}", history.skipped);
    // The journal goes on after the torn line once reopened: the torn bytes end a line of their own.
    f.write_all(b"\nnot json\n").unwrap();
    let session = crate::sessions::files::SessionDir::open(dir.path(), ID).unwrap();
    let j = Journal::reopen(&session, session.hold().unwrap(), DEFAULT_LIMIT, None).unwrap();
    j.update(&text("after"));
    let history = read(dir.path(), ID).unwrap();
    assert_eq!(history.records.len(), 3, "{:?}", history.records);
    assert_eq!(history.skipped.len(), 2, "{:?}", history.skipped);
}

#[test]
fn a_turn_that_never_ended_is_closed_with_its_open_tool_calls_failed() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.prompt(1, &[ContentBlock::from("one")], false);
    j.update(&SessionUpdate::ToolCall(
        ToolCall::new("done", "ls").status(ToolCallStatus::InProgress),
    ));
    j.update(&SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        "done",
        ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
    )));
    j.update(&SessionUpdate::ToolCall(
        ToolCall::new("open", "sleep").status(ToolCallStatus::InProgress),
    ));
    let mut history = read(dir.path(), ID).unwrap();
    assert_eq!(history.facts().open_turn, Some(1));
    let fix = repair(&history);
    assert_eq!(fix.len(), 2, "{fix:?}");
    match &fix[0] {
        Record::Update { u } if matches!(u.as_ref(), SessionUpdate::ToolCallUpdate(_)) => {
            let SessionUpdate::ToolCallUpdate(u) = u.as_ref() else {
                unreachable!()
            };
            assert_eq!(u.tool_call_id.to_string(), "open");
            assert_eq!(u.fields.status, Some(ToolCallStatus::Failed));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&fix[1], Record::TurnEnd { stop, .. } if stop == "interrupted"));
    j.records(&fix);
    history.records.extend(fix);
    assert_eq!(history.facts().open_turn, None);
    assert!(repair(&read(dir.path(), ID).unwrap()).is_empty());
    let replay = updates(&history, true, false);
    assert!(
        matches!(replay.last(), Some(SessionUpdate::Notice(_))),
        "{replay:?}"
    );
}

#[test]
fn past_the_limit_updates_are_left_out_but_turns_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::create(dir.path(), ID, std::path::Path::new("/w"), 300).unwrap();
    j.prompt(1, &[ContentBlock::from("p")], false);
    for _ in 0..20 {
        j.update(&text("0123456789"));
    }
    j.turn_end(1, "end_turn", None);
    let history = read(dir.path(), ID).unwrap();
    let gaps = history
        .records
        .iter()
        .filter(|r| matches!(r, Record::Gap { .. }))
        .count();
    assert_eq!(gaps, 1);
    assert!(matches!(history.records.last(), Some(Record::TurnEnd { .. })));
    assert!(std::fs::metadata(j.path()).unwrap().len() < 600);
}

#[test]
fn unreadable_journals_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let missing = read(dir.path(), ID).unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with(&format!("no session `{ID}` is kept here")),
        "{missing}"
    );
    let journal = |id: &str, text: &str| {
        let path = crate::sessions::state::journal_path(dir.path(), id);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    };
    journal("bad", "hello\n");
    assert!(
        read(dir.path(), "bad")
            .unwrap_err()
            .to_string()
            .contains("is not an acplb session journal")
    );
    journal(
        "newer",
        "{\"t\":\"open\",\"format\":99,\"session_id\":\"x\",\"cwd\":\"/\",\"at\":\"\"}\n",
    );
    assert!(
        read(dir.path(), "newer")
            .unwrap_err()
            .to_string()
            .contains("newer acplb")
    );
}

#[test]
fn a_digest_keeps_the_newest_turns_within_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    for n in 1..=50 {
        j.prompt(n, &[ContentBlock::from(format!("question {n}"))], false);
        j.update(&text(&format!("answer {n}")));
        j.turn_end(n, "end_turn", None);
    }
    let history = read(dir.path(), ID).unwrap();
    let d = digest(&history, 600).unwrap();
    assert!(d.len() <= 700, "{}", d.len());
    assert!(d.contains("User: question 50\n\nAgent: answer 50"), "{d}");
    assert!(!d.contains("question 1\n"), "{d}");
    assert!(digest(&History::default(), 600).is_none());
}

#[test]
fn a_history_reads_as_text_the_way_the_editor_showed_it() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.prompt(1, &[ContentBlock::from("list files")], false);
    j.update(&SessionUpdate::AgentThoughtChunk(ContentChunk::new(
        ContentBlock::from("Let me look."),
    )));
    j.update(&text("Sure, "));
    j.update(&text("running ls."));
    j.update(&SessionUpdate::ToolCall(
        ToolCall::new("c1", "ls").status(ToolCallStatus::InProgress),
    ));
    j.update(&SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        "c1",
        ToolCallUpdateFields::new()
            .status(ToolCallStatus::Completed)
            .content(vec![ContentBlock::from("```\nREADME.md\n```").into()]),
    )));
    j.turn_end(1, "end_turn", None);
    let shown = render(&read(dir.path(), ID).unwrap());
    let expected = "\n── turn 1 · ";
    assert!(shown.contains(expected), "{shown}");
    let body = shown.split_once("\n> list files\n").unwrap().1;
    assert_eq!(
        body,
        "(thinking) Let me look.\nSure, running ls.\n⏺ ls [other]\n⏺ ls\n  │ README.md\n  └ completed\n── turn 1 ended: end_turn\n"
    );
}

fn plan(json: serde_json::Value) -> SessionUpdate {
    serde_json::from_value(json).unwrap()
}

/// A markdown plan streamed whole (doubling) or as AIR deltas, with text between.
fn planned_turn(j: &Journal) {
    j.prompt(1, &[ContentBlock::from("plan it")], false);
    j.update(&text("I looked."));
    let whole = |t: &str| {
        plan(serde_json::json!({"sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "t1-p", "content": t}}))
    };
    let delta = |t: &str| {
        plan(serde_json::json!({"sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "t1-p", "content": ""},
        "_meta": {"jetbrains": {"air": {"version": 1, "contentDelta": t}}}}))
    };
    j.update(&whole("# Plan"));
    j.update(&whole("# Plan\n1. a"));
    j.update(&delta("\n2. b"));
    j.update(&text("Done."));
    j.update(&delta("\n3. c"));
    j.turn_end(1, "end_turn", None);
}

#[test]
fn a_markdown_plan_reads_as_the_plan_it_adds_up_to() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    planned_turn(&j);
    let history = read(dir.path(), ID).unwrap();
    let body = render(&history).split_once("\n> plan it\n").unwrap().1.to_owned();
    assert_eq!(
        body,
        "I looked.\nplan:\n# Plan\n1. a\n2. b\nDone.\nplan:\n# Plan\n1. a\n2. b\n3. c\n── turn 1 ended: end_turn\n"
    );
    let d = digest(&history, 4000).unwrap();
    assert!(
        d.ends_with("User: plan it\n\nAgent: I looked.Done.\n\nAgent's plan: # Plan\n1. a\n2. b\n3. c"),
        "{d}"
    );
}

/// Two markdown plans in one turn (a plan, then a new one): the digest gives both, in order.
#[test]
fn a_digest_keeps_every_plan_of_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    let whole = |id: &str, t: &str| {
        plan(serde_json::json!({"sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": id, "content": t}}))
    };
    j.prompt(1, &[ContentBlock::from("plan it twice")], false);
    j.update(&whole("t1-a", "# First"));
    j.update(&whole("t1-a", "# First\n1. a"));
    j.update(&text("Rethinking."));
    j.update(&whole("t1-b", "# Second"));
    j.turn_end(1, "end_turn", None);
    j.prompt(2, &[ContentBlock::from("go")], false);
    j.update(&text("Going."));
    j.turn_end(2, "end_turn", None);
    let d = digest(&read(dir.path(), ID).unwrap(), 4000).unwrap();
    assert!(
        d.ends_with(
            "User: plan it twice\n\nAgent: Rethinking.\n\nAgent's plan: # First\n1. a\n\nAgent's plan: # Second\n\nUser: go\n\nAgent: Going."
        ),
        "{d}"
    );
}

#[test]
fn a_line_over_the_cap_is_skipped_unread_and_reported_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.update(&text("before"));
    let mut f = std::fs::OpenOptions::new().append(true).open(j.path()).unwrap();
    f.write_all(format!("{}\n", "x".repeat(300)).as_bytes()).unwrap();
    j.update(&text("after"));
    let file = std::fs::File::open(j.path()).unwrap();
    let history = super::history::from_reader(j.path(), file, 200).unwrap();
    assert_eq!(
        history.records,
        [
            Record::Update {
                u: Box::new(text("before"))
            },
            Record::Update {
                u: Box::new(text("after"))
            },
        ]
    );
    assert_eq!(
        history.skipped,
        ["line 3: 300 bytes, over the 200-byte line limit (not read)"]
    );
}

/// A subagent's session in the journal (ADR 0055): its announcement shows in `sessions show`,
/// its own words are neither this session's text there nor in the digest.
#[test]
fn a_subagents_session_is_named_in_the_history_and_its_words_stay_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.prompt(1, &[ContentBlock::from("ask a helper")], false);
    j.update(&plan(serde_json::json!({"sessionUpdate": "subagent_update",
        "sessionId": "S:subagent:t", "title": "lister", "capabilities": {}})));
    let mut childs = text("I list.");
    assert!(crate::provider::route::to(&mut childs, "S:subagent:t"));
    j.update(&childs);
    j.update(&text("It is done."));
    j.turn_end(1, "end_turn", None);
    let history = read(dir.path(), ID).unwrap();
    let body = render(&history)
        .split_once("\n> ask a helper\n")
        .unwrap()
        .1
        .to_owned();
    assert_eq!(
        body,
        "⏺ Subagent: lister [session S:subagent:t]\nIt is done.\n── turn 1 ended: end_turn\n"
    );
    let d = digest(&history, 4000).unwrap();
    assert!(d.ends_with("User: ask a helper\n\nAgent: It is done."), "{d}");
}

/// A turn left open while a subagent session worked (ADR 0055): its open call fails in the
/// child's session, and the child, still running, is told its state is unknown.
#[test]
fn a_repair_closes_a_childs_call_in_its_session_and_its_state_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let j = open(dir.path());
    j.prompt(1, &[ContentBlock::from("ask a helper")], false);
    for state in [
        json!({"state": "running"}),
        json!({"state": "idle", "stopReason": "end_turn"}),
    ] {
        let child = if state["state"] == "running" {
            "S:subagent:a"
        } else {
            "S:subagent:b"
        };
        j.update(&plan(
            json!({"sessionUpdate": "subagent_update", "sessionId": child, "title": "t", "capabilities": {}}),
        ));
        j.update(&plan(
            json!({"sessionUpdate": "subagent_update", "sessionId": child, "state": state}),
        ));
    }
    let mut call = SessionUpdate::ToolCall(ToolCall::new("c1", "sleep").status(ToolCallStatus::InProgress));
    assert!(crate::provider::route::to(&mut call, "S:subagent:a"));
    j.update(&call);
    let fix = repair(&read(dir.path(), ID).unwrap());
    assert_eq!(fix.len(), 3, "{fix:?}");
    let Record::Update { u } = &fix[0] else {
        panic!("{fix:?}")
    };
    assert_eq!(
        crate::provider::route::of(u),
        Some("S:subagent:a"),
        "closed in the child's session"
    );
    let Record::Update { u } = &fix[1] else {
        panic!("{fix:?}")
    };
    assert_eq!(
        serde_json::to_value(u.as_ref()).unwrap(),
        json!({"sessionUpdate": "subagent_update", "sessionId": "S:subagent:a", "state": {"state": "unknown"}})
    );
    assert!(matches!(&fix[2], Record::TurnEnd { stop, .. } if stop == "interrupted"));
}
