//! ACP's unstable session methods end to end on both transports, with the real Codex against
//! the mock model (ADR 0036): `session/fork` (the fork sees the source's conversation and keeps
//! a journal and registry entry of its own), `session/set_title` and `/rename` (the title in
//! `session/list`, in a `session_info_update`, in a later load, and as Codex's thread name, for
//! a session open here and for one open nowhere), `session/archive` / `unarchive` (left out of
//! the list unless asked for, Codex's rollout archived and back, an open session closed first)
//! and `session/status`.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, CloseSessionRequest, ForkSessionRequest, ListSessionsRequest, LoadSessionRequest,
    NewSessionRequest, SessionArchiveFilter, SessionId, SessionInfo, SessionStatus, SessionStatusRequest,
    SetSessionTitleRequest, StopReason, UnarchiveSessionRequest,
};

use crate::delete::{files_under, rollouts_of};
use crate::harness::{open_session, prompt};
use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

/// `session/list` with `archived`, every session it shows.
pub(crate) async fn list(
    cx: &ConnectionTo<Agent>,
    archived: Option<SessionArchiveFilter>,
) -> Result<Vec<SessionInfo>, agent_client_protocol::Error> {
    let r = cx
        .send_request(ListSessionsRequest::new().archived(archived))
        .block_task()
        .await?;
    Ok(r.sessions)
}

fn listed<'a>(sessions: &'a [SessionInfo], id: &SessionId) -> Option<&'a SessionInfo> {
    sessions.iter().find(|s| s.session_id == *id)
}

/// Whether a file under `dir` holds `needle` (Codex keeps thread names in its home).
fn any_file_holds(dir: &Path, needle: &str) -> bool {
    files_under(dir)
        .iter()
        .any(|p| std::fs::read(p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes())))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_fork_starts_a_kept_session_with_the_source_conversation() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (source, forked, caps, sessions) = live
        .acplb
        .client(&updates, async |cx| {
            let (init, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain remember the word pelican").await?;
            let f = cx
                .send_request(ForkSessionRequest::new(s.session_id.clone(), &ws))
                .block_task()
                .await?;
            assert!(
                f.modes.is_some() && f.config_options.is_some(),
                "the fork says its modes and options"
            );
            let r = prompt(&cx, &f.session_id, "scenario:history what was the word?").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            let sessions = list(&cx, None).await?;
            let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
            Ok((s.session_id, f.session_id, caps, sessions))
        })
        .await
        .unwrap();
    for cap in ["fork", "title", "archive", "status"] {
        assert!(caps["sessionCapabilities"][cap].is_object(), "{cap}: {caps}");
    }
    assert_ne!(source, forked);
    assert!(
        listed(&sessions, &forked).is_some() && listed(&sessions, &source).is_some(),
        "{sessions:?}"
    );
    let requests = live.mock.requests();
    let fork_turn = requests
        .iter()
        .find(|r| r.body.to_string().contains("what was the word?"))
        .expect("the fork's turn reached the model");
    assert!(
        fork_turn.body.to_string().contains("remember the word pelican"),
        "the fork sees the source's words"
    );
    let journal = live.state_dir().join(format!("sessions/{forked}/journal.jsonl"));
    assert!(
        std::fs::read_to_string(journal)
            .unwrap()
            .contains("what was the word?")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_title_is_kept_listed_shown_and_given_to_codex() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (id, set, renamed, sessions) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id;
            prompt(&cx, &id, "scenario:plain first words").await?;
            let set = cx
                .send_request(SetSessionTitleRequest::new(id.clone(), "  Pelican\nnotes "))
                .block_task()
                .await?;
            let renamed = prompt(&cx, &id, "/rename Heron notes").await?;
            let sessions = list(&cx, None).await?;
            Ok((id, set, renamed, sessions))
        })
        .await
        .unwrap();
    assert_eq!(set.title, "Pelican notes", "trimmed, one line");
    assert!(set.meta.is_none(), "Codex took the name: {:?}", set.meta);
    assert_eq!(renamed.stop_reason, StopReason::EndTurn);
    assert!(renamed.meta.is_none(), "Codex took the name: {:?}", renamed.meta);
    assert_eq!(
        listed(&sessions, &id).unwrap().title.as_deref(),
        Some("Heron notes")
    );
    let infos: Vec<_> = live
        .updates
        .of_kind("session_info_update")
        .iter()
        .map(|u| u["title"].clone())
        .collect();
    assert_eq!(infos, ["Pelican notes", "Heron notes"], "each title shown");
    assert!(
        live.updates
            .agent_text()
            .contains("Session renamed to “Heron notes”.")
    );
    assert!(
        !live
            .mock
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("/rename")),
        "/rename never reaches the model"
    );
    assert!(
        any_file_holds(&live.env.home(), "Heron notes"),
        "Codex's thread is named"
    );
    live.acplb.wait_exit(Duration::from_secs(10)).await;

    // Open nowhere: the title lands in its journal and registry entry, and a load shows it.
    live.respawn();
    let updates = live.updates.clone();
    let (set, sessions, loaded) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let set = cx
                .send_request(SetSessionTitleRequest::new(id.clone(), "Closed title"))
                .block_task()
                .await?;
            let sessions = list(&cx, None).await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            let r = prompt(&cx, &id, "scenario:plain second words").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((set, sessions, list(&cx, None).await?))
        })
        .await
        .unwrap();
    assert_eq!(set.title, "Closed title");
    assert!(set.meta.is_none(), "{:?}", set.meta);
    assert_eq!(
        listed(&sessions, &id).unwrap().title.as_deref(),
        Some("Closed title")
    );
    assert_eq!(
        listed(&loaded, &id).unwrap().title.as_deref(),
        Some("Closed title"),
        "the load and its next turn keep the title"
    );
    assert!(
        any_file_holds(&live.env.home(), "Closed title"),
        "Codex's thread is renamed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archived_session_leaves_the_list_until_unarchived() {
    let mut live = Live::start();
    let ws = live.workspace();
    let id = one_turn_then_exit(&mut live, "scenario:plain keep me").await;
    let thread = live.thread_ids().into_iter().next().expect("a Codex thread");
    live.respawn();
    let updates = live.updates.clone();
    let archived_dir = live.env.home().join("archived_sessions");
    let in_archive = || {
        files_under(&archived_dir)
            .iter()
            .any(|p| p.to_string_lossy().contains(&thread))
    };
    assert!(!in_archive());
    let (default, included, only, status, refused, after) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let a = cx
                .send_request(ArchiveSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            assert!(a.meta.is_none(), "Codex archived the thread: {:?}", a.meta);
            assert!(in_archive(), "Codex's rollout is in its archive");
            // Archiving twice succeeds (ACP).
            cx.send_request(ArchiveSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            let default = list(&cx, None).await?;
            let included = list(&cx, Some(SessionArchiveFilter::Include)).await?;
            let only = list(&cx, Some(SessionArchiveFilter::Only)).await?;
            let status = cx
                .send_request(SessionStatusRequest::new(id.clone()))
                .block_task()
                .await?;
            let refused = cx
                .send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await
                .expect_err("an archived session is not loaded");
            cx.send_request(UnarchiveSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            let r = prompt(&cx, &id, "scenario:history back again").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((default, included, only, status, refused, list(&cx, None).await?))
        })
        .await
        .unwrap();
    assert!(listed(&default, &id).is_none(), "left out by default");
    assert_eq!(listed(&included, &id).unwrap().archived, Some(true));
    assert_eq!(only.iter().map(|s| &s.session_id).collect::<Vec<_>>(), [&id]);
    assert_eq!(status.status, SessionStatus::Saved);
    assert_eq!(refused.data.unwrap()["reason"], "session_archived");
    assert!(refused.message.contains("unarchive it"), "{}", refused.message);
    assert!(
        listed(&after, &id).is_some_and(|s| s.archived.is_none()),
        "back in the list"
    );
    assert!(
        live.updates.agent_text().contains("history seen=true"),
        "the unarchived Codex thread goes on: {}",
        live.updates.agent_text()
    );
    let rollouts = rollouts_of(&live, &thread);
    assert!(
        !rollouts.is_empty() && rollouts.iter().all(|p| !p.starts_with(&archived_dir)),
        "Codex's rollout is back: {rollouts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archiving_an_open_session_closes_it_first_and_status_follows() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (statuses, after_prompt, included) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id;
            prompt(&cx, &id, "scenario:plain hello").await?;
            let status = async |id: &SessionId| {
                cx.send_request(SessionStatusRequest::new(id.clone()))
                    .block_task()
                    .await
                    .map(|r| r.status)
            };
            let mut statuses = vec![status(&id).await?];
            cx.send_request(ArchiveSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            statuses.push(status(&id).await?);
            let after_prompt = prompt(&cx, &id, "scenario:plain closed?")
                .await
                .expect_err("closed");
            let t = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            statuses.push(status(&t.session_id).await?);
            // Open, so not archived: unarchiving it succeeds and leaves it open.
            cx.send_request(UnarchiveSessionRequest::new(t.session_id.clone()))
                .block_task()
                .await?;
            let r = prompt(&cx, &t.session_id, "scenario:plain still open").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            cx.send_request(CloseSessionRequest::new(t.session_id.clone()))
                .block_task()
                .await?;
            statuses.push(status(&t.session_id).await?);
            Ok((
                statuses,
                after_prompt,
                list(&cx, Some(SessionArchiveFilter::Include)).await?,
            ))
        })
        .await
        .unwrap();
    assert_eq!(
        statuses,
        [
            SessionStatus::Open,
            SessionStatus::Saved,
            SessionStatus::Open,
            SessionStatus::Saved
        ]
    );
    assert!(
        after_prompt.message.contains("unknown session"),
        "{}",
        after_prompt.message
    );
    assert_eq!(
        included.iter().filter(|s| s.archived == Some(true)).count(),
        1,
        "{included:?}"
    );
}
