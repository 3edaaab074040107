//! `acplb sessions list` and `acplb sessions prune` on a state dir seeded through the registry
//! library, with fake session folders.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use acplb_core::sessions::registry::{Entry, Registry, Status};
use acplb_core::sessions::state::{journal_path, session_dir};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");
const DAY: Duration = Duration::from_secs(86_400);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `acplb sessions ARGS` with `ACPLB_STATE_DIR=state`, in `dir`.
fn sessions(state: &Path, dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(ACPLB)
        .arg("sessions")
        .args(args)
        .current_dir(dir)
        .env("ACPLB_STATE_DIR", state)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A session last active `age` ago, of no live process.
fn entry(id: &str, cwd: &Path, age: Duration, status: Status) -> Entry {
    let mut e = Entry::new(id, cwd, SystemTime::now() - age);
    e.status = status;
    e.pid = None;
    e
}

fn register(state: &Path, e: &Entry) {
    Registry::new(state)
        .update(&e.key(), &e.session_id, |_| Some(e.clone()))
        .unwrap();
}

/// A session folder with a journal of `bytes` bytes.
fn folder(state: &Path, id: &str, bytes: usize) -> PathBuf {
    let dir = session_dir(state, id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(journal_path(state, id), "x".repeat(bytes)).unwrap();
    dir
}

fn set_mtime(path: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

/// Three sessions: two of `arch@core` in `w1`, one without identity in `w2`.
fn seeded() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let (w1, w2) = (tmp.path().join("w1"), tmp.path().join("w2"));
    std::fs::create_dir_all(&w1).unwrap();
    std::fs::create_dir_all(&w2).unwrap();
    let mut a = entry("sess-a", &w1, Duration::from_secs(3 * 3600), Status::Idle);
    a.identity = Some("arch".into());
    a.team = Some("core".into());
    a.title = Some(format!("a very long title {}", "about the registry ".repeat(5)));
    let mut b = entry("sess-b", &w1, Duration::from_secs(5 * 60), Status::Closed);
    b.identity = Some("arch".into());
    b.team = Some("core".into());
    b.title = Some("fix the\nflaky test".into());
    let c = entry("sess-c", &w2, 2 * DAY, Status::Interrupted);
    for e in [&a, &b, &c] {
        register(&state, e);
    }
    (tmp, state, w1, w2)
}

fn ids_in_order(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| id.starts_with("sess-"))
        .collect()
}

#[test]
fn list_shows_a_table_newest_first() {
    let (tmp, state, w1, _) = seeded();
    let run = sessions(&state, tmp.path(), &["list"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("ID") && lines[0].contains("STATUS") && lines[0].ends_with("TITLE"));
    assert_eq!(ids_in_order(&run.stdout), ["sess-b", "sess-a", "sess-c"]);
    let b = lines[1];
    assert!(b.contains("closed") && b.contains("5m ago"), "{b}");
    assert!(b.contains(&w1.display().to_string()), "{b}");
    assert!(b.ends_with("fix the flaky test"), "{b}");
    assert!(
        lines[2].contains("3h ago") && lines[2].ends_with('…'),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("interrupted") && lines[3].contains("2days ago"),
        "{}",
        lines[3]
    );
}

#[test]
fn list_json_prints_the_entries() {
    let (tmp, state, w1, _) = seeded();
    let run = sessions(&state, tmp.path(), &["list", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v: Vec<serde_json::Value> = serde_json::from_str(&run.stdout).unwrap();
    let ids: Vec<_> = v.iter().map(|e| e["sessionId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["sess-b", "sess-a", "sess-c"]);
    assert_eq!(v[0]["status"], "closed");
    assert_eq!(v[0]["identity"], "arch");
    assert_eq!(v[0]["cwd"], w1.display().to_string());
    assert!(v[2]["identity"].is_null());
}

#[test]
fn list_filters_by_cwd_and_identity() {
    let (tmp, state, w1, w2) = seeded();
    // A relative --cwd is taken from the current directory.
    let run = sessions(&state, &w1, &["list", "--cwd", "."]);
    assert_eq!(ids_in_order(&run.stdout), ["sess-b", "sess-a"]);
    let run = sessions(&state, &w1, &["list", "--cwd", "../w2"]);
    assert_eq!(ids_in_order(&run.stdout), ["sess-c"]);
    let w2_arg = w2.display().to_string();
    let run = sessions(&state, tmp.path(), &["list", "--cwd", &w2_arg, "--json"]);
    assert_eq!(
        serde_json::from_str::<Vec<serde_json::Value>>(&run.stdout)
            .unwrap()
            .len(),
        1
    );
    for who in ["arch", "arch@core"] {
        let run = sessions(&state, tmp.path(), &["list", "--identity", who]);
        assert_eq!(ids_in_order(&run.stdout), ["sess-b", "sess-a"], "{who}");
    }
    let run = sessions(&state, tmp.path(), &["list", "--identity", "arch@other"]);
    assert_eq!(run.code, Some(0));
    assert!(
        run.stdout.starts_with("no matching sessions (they are kept in "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&state.join("registry").display().to_string()));
}

#[test]
fn list_says_where_sessions_are_when_there_are_none() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let run = sessions(&missing, tmp.path(), &["list"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout.trim(),
        format!("no sessions yet (state dir {} does not exist)", missing.display())
    );
    let run = sessions(&missing, tmp.path(), &["list", "--json"]);
    assert_eq!(run.stdout.trim(), "[]");
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    std::fs::create_dir_all(&missing).unwrap();
    let run = sessions(&missing, tmp.path(), &["list"]);
    assert!(
        run.stdout.starts_with("no sessions (they are kept in "),
        "{}",
        run.stdout
    );
}

#[test]
fn a_corrupt_registry_file_is_a_warning_and_the_rest_is_listed() {
    let (tmp, state, _, _) = seeded();
    let bad = state.join("registry/broken@team.json");
    std::fs::write(&bad, "{\"version\": 3, \"sessions\": {").unwrap();
    let run = sessions(&state, tmp.path(), &["list"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(ids_in_order(&run.stdout), ["sess-b", "sess-a", "sess-c"]);
    assert!(run.stderr.starts_with("warning: "), "{}", run.stderr);
    assert!(run.stderr.contains(&bad.display().to_string()), "{}", run.stderr);
}

#[test]
fn sessions_help_says_where_sessions_are_kept() {
    for args in [&["--help"][..], &["list", "--help"], &["prune", "--help"]] {
        let run = sessions(Path::new("/nonexistent"), Path::new("/"), args);
        for needle in ["ACPLB_STATE_DIR", "XDG_STATE_HOME/acplb", "~/.local/state/acplb"] {
            assert!(
                run.stdout.contains(needle),
                "{args:?} lacks {needle}: {}",
                run.stdout
            );
        }
    }
}

#[test]
fn prune_rejects_a_bad_duration() {
    let tmp = tempfile::tempdir().unwrap();
    let run = sessions(tmp.path(), tmp.path(), &["prune", "--older-than", "soon"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("`soon` is not a duration"), "{}", run.stderr);
}

/// What a pruning test starts from, and what must go or stay.
struct PruneCase {
    _tmp: tempfile::TempDir,
    state: PathBuf,
    outside: PathBuf,
}

fn prune_case() -> PruneCase {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let w = tmp.path().join("w");
    let old = 40 * DAY;
    // Old and idle, with a folder: goes.
    register(&state, &entry("old-idle", &w, old, Status::Idle));
    folder(&state, "old-idle", 2048);
    // Old, closed, no folder: its entry goes.
    register(&state, &entry("old-closed", &w, old, Status::Closed));
    // Recent: stays.
    register(&state, &entry("recent", &w, DAY, Status::Idle));
    folder(&state, "recent", 10);
    // Old but active in a live acplb (this test process): stays.
    let mut live = entry("old-live", &w, old, Status::Active);
    live.pid = Some(std::process::id());
    register(&state, &live);
    folder(&state, "old-live", 10);
    // Old and active, its acplb gone: interrupted, goes.
    let mut dead = entry("old-dead", &w, old, Status::Active);
    let mut child = Command::new("true").spawn().unwrap();
    dead.pid = Some(child.id());
    child.wait().unwrap();
    register(&state, &dead);
    folder(&state, "old-dead", 100);
    // Old, but its folder is a link out of the state dir: refused, the target stays.
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("journal.jsonl"), "precious").unwrap();
    register(&state, &entry("old-link", &w, old, Status::Idle));
    std::os::unix::fs::symlink(&outside, session_dir(&state, "old-link")).unwrap();
    // Folders without an entry: an old one goes, a fresh one stays.
    folder(&state, "orphan-old", 500);
    set_mtime(&journal_path(&state, "orphan-old"), old);
    folder(&state, "orphan-new", 10);
    PruneCase {
        _tmp: tmp,
        state,
        outside,
    }
}

fn registered(state: &Path) -> Vec<String> {
    let mut ids: Vec<_> = Registry::new(state)
        .all()
        .unwrap()
        .into_entries()
        .into_iter()
        .map(|e| e.session_id)
        .collect();
    ids.sort();
    ids
}

fn folders(state: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(state.join("sessions"))
        .unwrap()
        .map(|d| d.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

const ALL_IDS: [&str; 6] = [
    "old-closed",
    "old-dead",
    "old-idle",
    "old-link",
    "old-live",
    "recent",
];
const ALL_FOLDERS: [&str; 7] = [
    "old-dead",
    "old-idle",
    "old-link",
    "old-live",
    "orphan-new",
    "orphan-old",
    "recent",
];

#[test]
fn prune_dry_run_deletes_nothing() {
    let case = prune_case();
    let run = sessions(&case.state, &case.state, &["prune", "--dry-run"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for id in ["old-idle", "old-closed", "old-dead", "orphan-old"] {
        assert!(
            run.stdout.contains(&format!("would delete {id} ")),
            "{id}: {}",
            run.stdout
        );
    }
    for id in ["recent", "old-live", "old-link", "orphan-new"] {
        assert!(!run.stdout.contains(&format!(" {id} ")), "{id}: {}", run.stdout);
    }
    // 2048 + 100 + 500 bytes of journals.
    assert!(
        run.stdout
            .contains("would delete 4 session(s), freeing 2.6 KiB (dry run"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("old-link") && run.stderr.contains("symbolic link"),
        "{}",
        run.stderr
    );
    assert_eq!(registered(&case.state), ALL_IDS);
    assert_eq!(folders(&case.state), ALL_FOLDERS);
}

#[test]
fn prune_deletes_old_sessions_and_orphans_and_keeps_the_rest() {
    let case = prune_case();
    let run = sessions(&case.state, &case.state, &["prune"]);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("deleted old-idle  idle, last active"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("deleted old-dead  interrupted"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("deleted old-closed  closed") && run.stdout.contains("(no folder)"));
    assert!(
        run.stdout
            .contains("deleted orphan-old  folder without registry entry"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("deleted 4 session(s), freed 2.6 KiB"),
        "{}",
        run.stdout
    );
    assert_eq!(registered(&case.state), ["old-link", "old-live", "recent"]);
    assert_eq!(
        folders(&case.state),
        ["old-link", "old-live", "orphan-new", "recent"]
    );
    assert_eq!(
        std::fs::read_to_string(case.outside.join("journal.jsonl")).unwrap(),
        "precious"
    );
    // A second run finds nothing more to do.
    let again = sessions(&case.state, &case.state, &["prune"]);
    assert!(
        again
            .stdout
            .contains("nothing to prune (no session unused for 30days)"),
        "{}",
        again.stdout
    );
    // A shorter limit takes the recent one too, never the live one.
    let short = sessions(&case.state, &case.state, &["prune", "--older-than", "12h"]);
    assert!(short.stdout.contains("deleted recent "), "{}", short.stdout);
    assert_eq!(registered(&case.state), ["old-link", "old-live"]);
}

/// The next line `acplb` printed, waiting at most 20 s for it.
fn next_line(lines: &std::sync::mpsc::Receiver<String>, what: &str) -> String {
    lines
        .recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|e| panic!("no line while waiting for {what:?}: {e}"))
}

/// Lines until one equal to `want` (the lines before it).
fn lines_until(lines: &std::sync::mpsc::Receiver<String>, want: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let line = next_line(lines, want);
        if line == want {
            return seen;
        }
        seen.push(line);
    }
}

#[test]
fn show_follow_prints_records_as_they_are_written_until_a_signal() {
    use std::io::BufRead as _;

    use acplb_core::sessions::journal::{DEFAULT_LIMIT, Journal};
    use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, SessionUpdate};

    const ID: &str = "0b6a3f0e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let journal = Journal::create(&state, ID, root.path(), DEFAULT_LIMIT).unwrap();
    journal.prompt(1, &[ContentBlock::from("first question")], false);

    let mut child = Command::new(ACPLB)
        .args(["sessions", "show", "--follow", ID])
        .env("ACPLB_STATE_DIR", &state)
        .env("RUST_LOG", "off")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            tx.send(line.unwrap()).unwrap();
        }
    });
    assert_eq!(next_line(&lines, "the header"), format!("session {ID}"));
    lines_until(&lines, "> first question");

    let chunk = |s: &str| SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(s)));
    journal.update(&chunk("a live "));
    journal.update(&chunk("answer"));
    journal.turn_end(1, "end_turn", None);
    let between = lines_until(&lines, "── turn 1 ended: end_turn");
    assert_eq!(between, ["a live answer"]);

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a signal ends --follow cleanly");
    reader.join().unwrap();
    assert!(lines.try_iter().next().is_none(), "nothing after the turn's end");
}
