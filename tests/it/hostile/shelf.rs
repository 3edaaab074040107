//! ACP's unstable session methods refused, end to end with the real Codex (ADR 0036): unknown
//! sessions (`-32002` with the id), malformed ids and titles (`-32602`; a bare `/rename` too), a bad `archived`
//! filter, a session another acplb has open (its title and archive mark refused, the session
//! untouched), an archived session loaded or resumed (refused until unarchived), and a fork of
//! a session whose turn is running (the fork goes on, the source's turn is not disturbed).

use agent_client_protocol::v1::schema::{
    ArchiveSessionRequest, CancelNotification, CloseSessionRequest, ForkSessionRequest, PromptRequest,
    ResumeSessionRequest, SessionArchiveFilter, SessionId, SessionStatus, SessionStatusRequest,
    SetSessionTitleRequest, StopReason, UnarchiveSessionRequest,
};

use crate::harness::{Updates, open_session, prompt, until_sleeping};
use crate::live::{Live, set_mode};
use crate::sessions::{initialize, one_turn_then_exit};
use crate::shelf::list;

/// An error's code, `data.reason` and message.
fn said(e: &agent_client_protocol::Error) -> (i32, String, String) {
    let reason = e
        .data
        .as_ref()
        .and_then(|d| d["reason"].as_str())
        .unwrap_or_default()
        .to_owned();
    (e.code.value(), reason, e.message.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_sessions_and_malformed_ids_are_refused() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let unknown = SessionId::new("0b6a3f0e-0000-4000-8000-000000000000");
    let (missing, malformed, filter, forks) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let mut missing = Vec::new();
            let e = cx
                .send_request(SetSessionTitleRequest::new(unknown.clone(), "t"))
                .block_task()
                .await;
            missing.push(e.expect_err("title of an unknown session"));
            let e = cx
                .send_request(ArchiveSessionRequest::new(unknown.clone()))
                .block_task()
                .await;
            missing.push(e.expect_err("archive of an unknown session"));
            let e = cx
                .send_request(UnarchiveSessionRequest::new(unknown.clone()))
                .block_task()
                .await;
            missing.push(e.expect_err("unarchive of an unknown session"));
            let e = cx
                .send_request(SessionStatusRequest::new(unknown.clone()))
                .block_task()
                .await;
            missing.push(e.expect_err("status of an unknown session"));
            let bad = SessionId::new("../../etc");
            let mut malformed = Vec::new();
            let e = cx
                .send_request(SetSessionTitleRequest::new(bad.clone(), "t"))
                .block_task()
                .await;
            malformed.push(e.expect_err("a malformed id"));
            let e = cx
                .send_request(ArchiveSessionRequest::new(bad.clone()))
                .block_task()
                .await;
            malformed.push(e.expect_err("a malformed id"));
            let filter = list(&cx, Some(SessionArchiveFilter::Other("sideways".into())))
                .await
                .expect_err("an unknown filter");
            let mut forks = Vec::new();
            for source in [unknown.clone(), bad] {
                let e = cx
                    .send_request(ForkSessionRequest::new(source, &ws))
                    .block_task()
                    .await;
                forks.push(e.expect_err("no such source"));
            }
            // The open session is untouched by all of it.
            let r = prompt(&cx, &s.session_id, "scenario:plain still here").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((missing, malformed, filter, forks))
        })
        .await
        .unwrap();
    for e in &missing {
        let (code, reason, message) = said(e);
        assert_eq!(
            code,
            agent_client_protocol::ErrorCode::RESOURCE_NOT_FOUND.value(),
            "{message}"
        );
        assert_eq!(reason, "unknown_session");
        assert!(message.contains("unknown session `0b6a3f0e-"), "{message}");
        assert_eq!(e.data.as_ref().unwrap()["sessionId"], unknown.to_string());
    }
    for e in &malformed {
        let (code, reason, message) = said(e);
        assert_eq!((code, reason.as_str()), (-32602, "invalid_params"), "{message}");
        assert!(message.contains("is not a session id"), "{message}");
    }
    assert!(said(&filter).2.contains("`archived` is one of"), "{filter:?}");
    assert!(
        said(&forks[0]).2.contains("cannot fork session `0b6a3f0e-"),
        "{forks:?}"
    );
    assert!(said(&forks[1]).2.contains("is not a session id"), "{forks:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_overlong_and_control_character_titles_are_refused() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let titles = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let mut titles = Vec::new();
            for title in ["", " \n\t ", &"x".repeat(257), "bell\u{7}"] {
                let e = cx
                    .send_request(SetSessionTitleRequest::new(s.session_id.clone(), title))
                    .block_task()
                    .await;
                titles.push(e.expect_err("a bad title"));
            }
            // A bare `/rename` is the empty title, refused the same way, never a turn.
            titles.push(prompt(&cx, &s.session_id, "/rename").await.expect_err("no title"));
            Ok(titles)
        })
        .await
        .unwrap();
    let messages: Vec<_> = titles.iter().map(said).collect();
    assert!(
        messages.iter().all(|(code, _, _)| *code == -32602),
        "{messages:?}"
    );
    assert!(messages[0].2.contains("the title is empty") && messages[1].2.contains("the title is empty"));
    assert!(
        messages[2].2.contains("257 characters long; at most 256"),
        "{messages:?}"
    );
    assert!(messages[3].2.contains("control character"), "{messages:?}");
    assert!(messages[4].2.contains("the title is empty"), "{messages:?}");
    assert!(
        !live
            .mock
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("/rename")),
        "a refused /rename never reaches the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_in_another_acplb_keeps_its_title_and_stays_listed() {
    let mut live = Live::start();
    let ws = live.workspace();
    let mut other = live.another();
    let updates = live.updates.clone();
    let other_updates = Updates::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<SessionId>();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let a = live.acplb.client(&updates, async |cx| {
        let (_, s) = open_session(&cx, &ws).await?;
        prompt(&cx, &s.session_id, "scenario:plain hello").await?;
        tx.send(s.session_id.clone()).unwrap();
        done_rx.recv().await;
        let r = prompt(&cx, &s.session_id, "scenario:plain still here").await?;
        assert_eq!(r.stop_reason, StopReason::EndTurn);
        let sessions = list(&cx, None).await?;
        cx.send_request(CloseSessionRequest::new(s.session_id.clone()))
            .block_task()
            .await?;
        Ok((s.session_id, sessions))
    });
    let b = other.client(&other_updates, async |cx| {
        initialize(&cx).await?;
        let id = rx.recv().await.unwrap();
        let title = cx
            .send_request(SetSessionTitleRequest::new(id.clone(), "Stolen"))
            .block_task()
            .await;
        let archive = cx
            .send_request(ArchiveSessionRequest::new(id.clone()))
            .block_task()
            .await;
        let status = cx
            .send_request(SessionStatusRequest::new(id.clone()))
            .block_task()
            .await?;
        // It is not archived, so unarchiving it succeeds (ACP) without touching it.
        cx.send_request(UnarchiveSessionRequest::new(id.clone()))
            .block_task()
            .await?;
        done_tx.send(()).unwrap();
        Ok((
            title.expect_err("refused"),
            archive.expect_err("refused"),
            status.status,
        ))
    });
    let (a, b) = tokio::join!(a, b);
    let (id, sessions) = a.unwrap();
    let (title, archive, status) = b.unwrap();
    for e in [&title, &archive] {
        let (code, reason, message) = said(e);
        assert_eq!((code, reason.as_str()), (-32602, "session_held"), "{message}");
        assert!(
            message.contains("is open in another acplb (process "),
            "{message}"
        );
    }
    assert_eq!(status, SessionStatus::Saved, "not open in the asking acplb");
    let entry = sessions
        .iter()
        .find(|s| s.session_id == id)
        .expect("still listed");
    assert_eq!(
        entry.title.as_deref(),
        Some("scenario:plain hello"),
        "the title is the first prompt's"
    );
    assert!(entry.archived.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archived_session_is_not_resumed_but_can_be_forked() {
    let mut live = Live::start();
    let ws = live.workspace();
    let id = one_turn_then_exit(&mut live, "scenario:plain remember the word egret").await;
    live.respawn();
    let updates = live.updates.clone();
    let (resume, forked) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            cx.send_request(ArchiveSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            let resume = cx
                .send_request(ResumeSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await
                .expect_err("archived");
            let f = cx
                .send_request(ForkSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            let r = prompt(&cx, &f.session_id, "scenario:plain and the word?").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((resume, f.session_id))
        })
        .await
        .unwrap();
    let (code, reason, message) = said(&resume);
    assert_eq!((code, reason.as_str()), (-32602, "session_archived"), "{message}");
    let last = live.mock.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("remember the word egret"),
        "the fork of {forked} sees the words: {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forking_a_session_mid_turn_leaves_its_turn_alone() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (source_turn, fork_turn) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            prompt(&cx, &s.session_id, "scenario:plain remember the word ibis").await?;
            let running = cx
                .send_request(PromptRequest::new(
                    s.session_id.clone(),
                    vec!["scenario:sleep".into()],
                ))
                .block_task();
            let running = tokio::spawn(running);
            until_sleeping(&watch).await;
            let f = cx
                .send_request(ForkSessionRequest::new(s.session_id.clone(), &ws))
                .block_task()
                .await?;
            let fork_turn = prompt(&cx, &f.session_id, "scenario:history the word?").await?;
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            let source_turn = running.await.unwrap()?;
            Ok((source_turn.stop_reason, fork_turn.stop_reason))
        })
        .await
        .unwrap();
    assert_eq!(fork_turn, StopReason::EndTurn);
    assert_eq!(
        source_turn,
        StopReason::Cancelled,
        "the source's turn ran until cancelled"
    );
    let fork_request = live
        .mock
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("the word?"))
        .expect("the fork's turn reached the model");
    assert!(fork_request.body.to_string().contains("remember the word ibis"));
}
