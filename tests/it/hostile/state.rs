//! acplb's state directory turned against it, end to end with the real Codex: a journal or a
//! session folder that is a link, a journal or summary that is a FIFO, a journal line of
//! hundreds of MiB, two acplb loading one session at once, and journal writes that fail (the
//! journal grown to its file system's largest size, so each append fails as on a full disk).

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use acplb_core::sessions::state::{journal_path, session_dir, summary_path};
use agent_client_protocol::v1::schema::{LoadSessionRequest, SessionId, StopReason};

use super::wire::peak_rss;
use crate::harness::{Acplb, Updates, open_session, prompt};
use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

/// `session/load` of `id` in a fresh acplb, answered within 20 s (a hang fails the test):
/// the error's message, or `None` when it loaded.
async fn load(live: &mut Live, id: &SessionId) -> Option<String> {
    live.respawn();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let id = id.clone();
    let answer = live.acplb.client(&updates, async |cx| {
        initialize(&cx).await?;
        let load = cx.send_request(LoadSessionRequest::new(id, &ws)).block_task();
        Ok(tokio::time::timeout(Duration::from_secs(20), load).await)
    });
    let answer = answer.await.unwrap();
    let answer = answer.unwrap_or_else(|_| panic!("session/load hung; stderr:\n{}", live.acplb.stderr()));
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    answer.err().map(|e| e.message)
}

/// `acplb sessions ARGS` with this test's state directory, which must end within 20 s:
/// its exit code and stderr.
fn sessions_cli(live: &Live, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_acplb"))
        .arg("sessions")
        .args(args)
        .env("ACPLB_STATE_DIR", live.state_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("`acplb sessions {args:?}` hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_or_session_folder_that_is_a_link_is_refused_and_nothing_is_written_through_it() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain hello").await;
    let state = live.state_dir();
    let elsewhere = tempfile::tempdir().unwrap();

    // The journal is a link to a file outside the state directory.
    let journal = journal_path(&state, &id.to_string());
    let outside = elsewhere.path().join("journal.jsonl");
    std::fs::rename(&journal, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &journal).unwrap();
    let before = std::fs::read(&outside).unwrap();
    let refused = load(&mut live, &id).await.expect("a linked journal is refused");
    assert!(refused.contains("symbolic link"), "{refused}");
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        before,
        "nothing written through the link"
    );
    let (code, stderr) = sessions_cli(&live, &["show", &id.to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("symbolic link"), "{stderr}");

    // The whole session folder is a link to a folder outside.
    std::fs::remove_file(&journal).unwrap();
    std::fs::rename(&outside, &journal).unwrap();
    let folder = session_dir(&state, &id.to_string());
    let moved = elsewhere.path().join("session");
    std::fs::rename(&folder, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &folder).unwrap();
    let listing = |dir: &Path| -> Vec<(PathBuf, u64)> {
        let mut all: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.path(), e.metadata().unwrap().len())
            })
            .collect();
        all.sort();
        all
    };
    let before = listing(&moved);
    let refused = load(&mut live, &id).await.expect("a linked folder is refused");
    assert!(
        refused.contains("cannot open the session folder") && refused.contains("symbolic link"),
        "{refused}"
    );
    assert_eq!(listing(&moved), before, "nothing written through the link");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_or_summary_that_is_a_fifo_is_refused_at_once_never_waited_on() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain hello").await;
    let state = live.state_dir();
    let journal = journal_path(&state, &id.to_string());
    let kept = journal.with_extension("kept");
    std::fs::rename(&journal, &kept).unwrap();
    nix::unistd::mkfifo(&journal, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let refused = load(&mut live, &id).await.expect("a FIFO is no journal");
    assert!(refused.contains("it is a FIFO, not a regular file"), "{refused}");
    for args in [&["show"][..], &["show", "--follow"], &["summary"]] {
        let mut args = args.to_vec();
        let id = id.to_string();
        args.insert(1, &id);
        let (code, stderr) = sessions_cli(&live, &args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("a FIFO, not a regular file"),
            "{args:?}: {stderr}"
        );
    }

    // A summary that is a FIFO is not read: the session loads (from its journal's digest).
    std::fs::remove_file(&journal).unwrap();
    std::fs::rename(&kept, &journal).unwrap();
    let summary = summary_path(&state, &id.to_string());
    nix::unistd::mkfifo(&summary, nix::sys::stat::Mode::S_IRWXU).unwrap();
    assert_eq!(load(&mut live, &id).await, None, "loaded");
    let (code, stderr) = sessions_cli(&live, &["summary", &id.to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_line_of_hundreds_of_mib_is_skipped_without_being_held() {
    const HUGE: u64 = 300 << 20;
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain remember the pelican").await;
    let journal = journal_path(&live.state_dir(), &id.to_string());
    // 300 MiB of zero bytes (a hole: nothing is written to disk), then the line's end.
    let file = OpenOptions::new().append(true).open(&journal).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len + HUGE).unwrap();
    std::io::Write::write_all(&mut &file, b"\n").unwrap();
    drop(file);

    live.respawn();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let pid = live.acplb.pid;
    let (loaded, peak) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let loaded = cx
                .send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await
                .map(|_| ());
            Ok((loaded, peak_rss(pid)))
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    loaded.expect("the session loads without its damaged line");
    assert!(
        peak < 150 << 20,
        "acplb's peak memory was {} MiB for a {} MiB line",
        peak >> 20,
        HUGE >> 20
    );
    let users = live.updates.user_text();
    assert!(users.contains("remember the pelican"), "{users}");
    let stderr = live.acplb.stderr();
    assert!(
        stderr.contains(&format!("{HUGE} bytes, over the 64 MiB line limit")),
        "reported as damaged: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_acplb_loading_one_session_at_once_open_it_once_and_the_other_is_told_who_has_it() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain hello").await;
    live.respawn();
    let mut other = live.another();
    let ws = live.workspace();
    let (both_ready, both_answered) = (tokio::sync::Barrier::new(2), tokio::sync::Barrier::new(2));
    let (a, b) = tokio::join!(
        race_to_load(&mut live.acplb, &ws, &id, &both_ready, &both_answered),
        race_to_load(&mut other, &ws, &id, &both_ready, &both_answered),
    );
    let (winner, loser) = match (&a.1, &b.1) {
        (Ok(()), Err(e)) => (a.0, e.clone()),
        (Err(e), Ok(())) => (b.0, e.clone()),
        _ => panic!("exactly one acplb must have the session: {a:?} {b:?}"),
    };
    assert!(
        loser.contains(&format!("is open in another acplb (process {winner})")),
        "{loser}"
    );
}

/// Initializes, then loads `id` when the other racer is ready too; stays until both are
/// answered, so the winner still has the session when the other asks. Its pid and its answer.
async fn race_to_load(
    acplb: &mut Acplb,
    ws: &Path,
    id: &SessionId,
    ready: &tokio::sync::Barrier,
    answered: &tokio::sync::Barrier,
) -> (u32, Result<(), String>) {
    let pid = acplb.pid;
    let result = acplb
        .client(&Updates::default(), async |cx| {
            initialize(&cx).await?;
            ready.wait().await;
            let load = cx
                .send_request(LoadSessionRequest::new(id.clone(), ws))
                .block_task()
                .await;
            answered.wait().await;
            Ok(load.map(|_| ()).map_err(|e| e.message))
        })
        .await
        .unwrap();
    (pid, result)
}

/// Grows the file at `path` to the largest size its file system allows (a hole, no blocks),
/// so appending to it fails (`EFBIG`, as a full disk fails with `ENOSPC`); `cut_back` undoes it.
fn fill_to_the_limit(path: &Path) {
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
}

fn cut_back(path: &Path, len: u64) {
    OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journal_writes_that_fail_are_retried_the_editor_is_told_and_the_gap_is_marked() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let state = live.state_dir();
    let seen = live.updates.clone();
    let (id, unrecorded, recorded) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id;
            prompt(&cx, &id, "scenario:plain first turn").await?;
            let journal = journal_path(&state, &id.to_string());
            let good = std::fs::metadata(&journal).unwrap().len();
            fill_to_the_limit(&journal);
            let lost = prompt(&cx, &id, "scenario:plain second turn").await?;
            assert_eq!(lost.stop_reason, StopReason::EndTurn);
            let told = seen.agent_text();
            assert!(told.contains("This session is not being recorded"), "{told}");
            assert!(told.contains("This turn was not fully recorded"), "{told}");
            cut_back(&journal, good);
            let kept = prompt(&cx, &id, "scenario:plain third turn").await?;
            Ok((id, lost.meta, kept.meta))
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    let unrecorded = unrecorded.expect("the answer says its turn was not recorded");
    assert!(
        unrecorded["acplb/unrecorded"].as_u64().is_some_and(|n| n > 0),
        "{unrecorded:?}"
    );
    assert!(recorded.is_none(), "the third turn was recorded: {recorded:?}");
    let told = live.updates.agent_text();
    assert!(told.contains("This session is recorded again"), "{told}");

    assert_eq!(load(&mut live, &id).await, None, "loaded");
    let users = live.updates.user_text();
    assert!(users.contains("first turn"), "{users}");
    assert!(
        users.contains("third turn"),
        "the turn after the failure was kept: {users}"
    );
    assert!(!users.contains("second turn"), "{users}");
    let shown = live.updates.agent_text();
    assert!(
        shown.contains("Part of this session was not recorded"),
        "the gap is shown where it is: {shown}"
    );
}
