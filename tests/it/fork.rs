//! `session/new` with `_meta: {"acplb/forkOf": "<id>"}`, end to end on both transports: the new
//! session starts with the source's conversation (a forked Codex thread on app-server, a
//! digest on exec) and leaves the source as it was; a source that cannot be forked is refused
//! with a reason and leaves no session behind.

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{NewSessionRequest, NewSessionResponse, StopReason};
use serde_json::{Value, json};

use crate::harness::{open_session, prompt, transport};
use crate::live::Live;

async fn fork(
    cx: &ConnectionTo<Agent>,
    cwd: &std::path::Path,
    source: Value,
) -> Result<NewSessionResponse, agent_client_protocol::Error> {
    let mut meta = serde_json::Map::new();
    meta.insert("acplb/forkOf".into(), source);
    cx.send_request(NewSessionRequest::new(cwd).meta(meta))
        .block_task()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_session_starts_with_the_source_conversation() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (source, forked) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain remember the word pelican").await?;
            let f = fork(&cx, &ws, json!(s.session_id.to_string())).await?;
            let r = prompt(&cx, &f.session_id, "scenario:history what was the word?").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            // The source goes on by itself.
            let r = prompt(&cx, &s.session_id, "scenario:history and the source?").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((s.session_id, f.session_id))
        })
        .await
        .unwrap();
    assert_ne!(source, forked);
    let requests = live.mock.requests();
    let body = |needle: &str| {
        requests
            .iter()
            .find(|r| r.body.to_string().contains(needle))
            .unwrap_or_else(|| panic!("no request with {needle}"))
    };
    let first = body("remember the word pelican");
    let fork_request = body("what was the word?");
    let source_again = body("and the source?");
    let thread = |r: &acplb_playback::mock_model::LoggedRequest| r.header("thread-id").map(str::to_owned);
    assert_ne!(
        thread(fork_request),
        thread(first),
        "the fork has a thread of its own"
    );
    assert_eq!(thread(source_again), thread(first), "the source keeps its thread");
    assert!(
        !source_again.body.to_string().contains("what was the word?"),
        "the fork's turn is not in the source's thread"
    );
    let text = fork_request.body.to_string();
    assert!(text.contains("remember the word pelican"), "{text}");
    if transport() == "exec" {
        assert!(text.contains("(a fork)"), "exec starts from a digest: {text}");
    } else {
        assert!(
            !text.contains("(a fork)"),
            "app-server forks the thread itself: {text}"
        );
    }
    let journal =
        std::fs::read_to_string(live.state_dir().join(format!("sessions/{forked}/journal.jsonl"))).unwrap();
    assert!(
        journal.contains("what was the word?"),
        "the fork keeps its own journal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forking_what_cannot_be_forked_says_why() {
    let mut live = Live::start();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let errors = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let damaged = state.join("sessions/damaged-1");
            std::fs::create_dir_all(&damaged).unwrap();
            std::fs::write(damaged.join("journal.jsonl"), "not a journal\n").unwrap();
            let before = std::fs::read_dir(state.join("sessions")).unwrap().count();
            let mut errors = Vec::new();
            for source in [
                json!("0b6a3f0e-0000-4000-8000-000000000000"),
                json!("../../etc"),
                json!(7),
                json!("damaged-1"),
            ] {
                errors.push(fork(&cx, &ws, source).await.unwrap_err().message);
            }
            let after = std::fs::read_dir(state.join("sessions")).unwrap().count();
            assert_eq!(before, after, "a refused fork leaves no session behind");
            // The session that is open still works.
            let r = prompt(&cx, &s.session_id, "scenario:plain still here").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok(errors)
        })
        .await
        .unwrap();
    assert!(
        errors[0].contains(
            "cannot fork session `0b6a3f0e-0000-4000-8000-000000000000`: acplb keeps no session of that id"
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("acplb/forkOf") && errors[1].contains("is not a session id acplb hands out"),
        "{}",
        errors[1]
    );
    assert!(errors[2].contains("must be a session id"), "{}", errors[2]);
    assert!(
        errors[3].contains("cannot fork session `damaged-1`")
            && errors[3].contains("is not an acplb session journal"),
        "{}",
        errors[3]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_whose_thread_is_gone_is_forked_from_a_digest() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let source = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain remember the word heron").await?;
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    // Codex's record of its threads, gone (another CODEX_HOME would look the same).
    std::fs::remove_dir_all(live.env.home().join("sessions")).unwrap();
    live.respawn();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            let (_, _) = open_session(&cx, &ws).await?;
            let f = fork(&cx, &ws, json!(source.to_string())).await?;
            prompt(&cx, &f.session_id, "scenario:plain and the word?").await
        })
        .await
        .unwrap();
    let last = live.mock.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("(a fork)") && last.contains("remember the word heron"),
        "the new thread starts from the digest: {last}"
    );
    if transport() != "exec" {
        let text = live.updates.agent_text();
        assert!(
            text.contains("Codex could not fork the earlier conversation"),
            "a notice says so: {text}"
        );
    }
}
