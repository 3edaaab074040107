//! `session/delete` end to end with the real Codex on both transports: a session open here is
//! closed and deleted, a closed one (from an earlier acplb) deleted; either way its journal
//! folder, its registry entry and its Codex thread (the rollout in `CODEX_HOME`) are gone and
//! `session/list` no longer shows it. Refusals are in `hostile/delete.rs`.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{DeleteSessionRequest, ListSessionsRequest, SessionId};

use crate::harness::{open_session, prompt};
use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

/// Every file under `dir`, recursively.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(read) = std::fs::read_dir(&d) else { continue };
        for e in read.flatten() {
            let p = e.path();
            if p.is_dir() { todo.push(p) } else { found.push(p) }
        }
    }
    found
}

/// Codex's saved rollouts of `thread` in this test's `CODEX_HOME` (active or archived).
pub(crate) fn rollouts_of(live: &Live, thread: &str) -> Vec<PathBuf> {
    let home = live.env.home();
    let mut found = files_under(&home.join("sessions"));
    found.extend(files_under(&home.join("archived_sessions")));
    found.retain(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().contains(thread))
    });
    found
}

/// Whether any registry file names `id`.
pub(crate) fn registry_names(live: &Live, id: &SessionId) -> bool {
    files_under(&live.state_dir().join("registry"))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .any(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .contains(&id.to_string())
        })
}

fn assert_all_gone(live: &Live, id: &SessionId, thread: &str) {
    let folder = live.state_dir().join("sessions").join(id.to_string());
    assert!(
        !folder.exists(),
        "the journal folder is gone: {}",
        folder.display()
    );
    assert!(!registry_names(live, id), "the registry no longer lists {id}");
    assert_eq!(
        rollouts_of(live, thread),
        Vec::<PathBuf>::new(),
        "the Codex thread is deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_open_session_closes_it_and_removes_journal_entry_and_thread() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let home = live.env.home();
    let (id, listed, after_delete) = live
        .acplb
        .client(&updates, async |cx| {
            let (init, s) = open_session(&cx, &ws).await?;
            let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
            assert!(caps["sessionCapabilities"]["delete"].is_object(), "{caps}");
            prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            let saved = files_under(&home.join("sessions")).len();
            assert_eq!(saved, 1, "Codex saved the thread before the delete");
            cx.send_request(DeleteSessionRequest::new(s.session_id.clone()))
                .block_task()
                .await?;
            let listed = cx.send_request(ListSessionsRequest::new()).block_task().await?;
            let after = prompt(&cx, &s.session_id, "scenario:plain still there?").await;
            Ok((s.session_id, listed, after))
        })
        .await
        .unwrap();
    let thread = live.thread_ids().into_iter().next().expect("a thread ran");
    assert!(!thread.is_empty());
    assert_all_gone(&live, &id, &thread);
    assert!(listed.sessions.iter().all(|s| s.session_id != id), "{listed:?}");
    let e = after_delete.expect_err("a deleted session takes no prompt");
    assert!(e.message.contains("unknown session"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_closed_session_from_an_earlier_acplb_removes_it() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain first").await;
    let thread = live.thread_ids().into_iter().next().expect("a thread ran");
    assert_eq!(rollouts_of(&live, &thread).len(), 1, "Codex saved the thread");
    assert!(registry_names(&live, &id));

    live.respawn();
    let updates = live.updates.clone();
    let listed = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let before = cx.send_request(ListSessionsRequest::new()).block_task().await?;
            assert!(before.sessions.iter().any(|s| s.session_id == id), "{before:?}");
            cx.send_request(DeleteSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            cx.send_request(ListSessionsRequest::new()).block_task().await
        })
        .await
        .unwrap();
    assert!(listed.sessions.is_empty(), "{listed:?}");
    assert_all_gone(&live, &id, &thread);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_deletes_a_closed_session_and_says_why_it_cannot_delete_another() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain first").await;
    let thread = live.thread_ids().into_iter().next().expect("a thread ran");
    let run = |id: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
            .args(["sessions", "delete", id])
            .env("ACPLB_STATE_DIR", live.state_dir())
            .output()
            .unwrap()
    };
    let out = run(&id.to_string());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("deleted session {id}")), "{stdout}");
    assert!(
        stdout.contains(&format!("Codex thread {thread} is kept")),
        "{stdout}"
    );
    assert!(!live.state_dir().join("sessions").join(id.to_string()).exists());
    assert!(!registry_names(&live, &id));
    let again = run(&id.to_string());
    assert!(!again.status.success());
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains(&format!("unknown session `{id}`")), "{stderr}");
}
