//! `session/delete` refused, end to end with the real Codex: an id that could name a path, a session another acplb has open (kept whole, named by its pid), a
//! session folder that is a link (never followed: its target is untouched); and an unknown
//! session, which ACP wants deleted without an error (`_meta` says there was none).

use agent_client_protocol::v1::schema::{CloseSessionRequest, DeleteSessionRequest, SessionId};

use crate::delete::{registry_names, rollouts_of};
use crate::harness::{open_session, prompt};
use crate::live::Live;
use crate::sessions::{initialize, one_turn_then_exit};

/// `session/delete` of each id in a fresh acplb: each error's message and `data.reason`.
async fn refusals(live: &mut Live, ids: &[SessionId]) -> Vec<(String, String)> {
    live.respawn();
    let updates = live.updates.clone();
    let ids = ids.to_vec();
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let mut out = Vec::new();
            for id in ids {
                let e = cx
                    .send_request(DeleteSessionRequest::new(id.clone()))
                    .block_task()
                    .await
                    .expect_err("refused");
                let reason = e
                    .data
                    .as_ref()
                    .map(|d| d["reason"].to_string())
                    .unwrap_or_default();
                out.push((e.message, reason));
            }
            Ok(out)
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_unknown_session_succeeds_saying_so_and_a_malformed_id_is_refused() {
    let mut live = Live::start();
    live.respawn();
    let updates = live.updates.clone();
    let (unknown, twice) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            // ACP: deleting what is not there (never created, or deleted already) succeeds.
            let unknown = cx
                .send_request(DeleteSessionRequest::new("no-such-session"))
                .block_task()
                .await?;
            let twice = cx
                .send_request(DeleteSessionRequest::new("no-such-session"))
                .block_task()
                .await?;
            Ok((unknown, twice))
        })
        .await
        .unwrap();
    for answer in [unknown, twice] {
        let meta = serde_json::to_value(&answer.meta).unwrap();
        let said = meta["acplb/notFound"].as_str().unwrap_or_default().to_owned();
        assert!(said.contains("unknown session `no-such-session`"), "{meta}");
    }
    let got = refusals(&mut live, &[SessionId::new("../../etc")]).await;
    assert!(got[0].0.contains("is not a session id"), "{got:?}");
    assert_eq!(got[0].1, "\"invalid_params\"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_folder_that_is_a_link_is_not_followed() {
    let mut live = Live::start();
    let id = one_turn_then_exit(&mut live, "scenario:plain first").await;
    let folder = live.state_dir().join("sessions").join(id.to_string());
    let elsewhere = live.workspace().join("elsewhere");
    std::fs::rename(&folder, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &folder).unwrap();
    let got = refusals(&mut live, std::slice::from_ref(&id)).await;
    assert!(got[0].0.contains("cannot delete the session folder"), "{got:?}");
    assert_eq!(got[0].1, "\"storage\"");
    assert!(
        elsewhere.join("journal.jsonl").exists(),
        "the link's target is untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_in_another_acplb_is_not_deleted() {
    let mut live = Live::start();
    let ws = live.workspace();
    let mut other = live.another();
    let updates = live.updates.clone();
    let other_updates = crate::harness::Updates::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<SessionId>();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    // acplb A holds the session until B has tried to delete it.
    let a = live.acplb.client(&updates, async |cx| {
        let (_, s) = open_session(&cx, &ws).await?;
        prompt(&cx, &s.session_id, "scenario:plain hello").await?;
        tx.send(s.session_id.clone()).unwrap();
        done_rx.recv().await;
        // A's session is whole: it still takes a prompt.
        prompt(&cx, &s.session_id, "scenario:plain still here").await?;
        cx.send_request(CloseSessionRequest::new(s.session_id.clone()))
            .block_task()
            .await?;
        Ok(s.session_id)
    });
    let b = other.client(&other_updates, async |cx| {
        initialize(&cx).await?;
        let id = rx.recv().await.unwrap();
        let refused = cx
            .send_request(DeleteSessionRequest::new(id.clone()))
            .block_task()
            .await
            .expect_err("refused while A has it");
        done_tx.send(()).unwrap();
        Ok(refused)
    });
    let (a, b) = tokio::join!(a, b);
    let id = a.unwrap();
    let refused = b.unwrap();
    assert!(
        refused.message.contains("cannot delete it: session `")
            && refused.message.contains("is open in another acplb (process "),
        "{}",
        refused.message
    );
    assert_eq!(refused.data.unwrap()["reason"], "session_held");
    let folder = live.state_dir().join("sessions").join(id.to_string());
    assert!(folder.join("journal.jsonl").exists(), "the journal is kept");
    assert!(registry_names(&live, &id), "the registry entry is kept");
    let thread = live.thread_ids().into_iter().next().unwrap();
    assert_eq!(rollouts_of(&live, &thread).len(), 1, "the Codex thread is kept");
}
