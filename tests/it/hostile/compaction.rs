//! Compaction under hostile conditions (ADR 0037): a compaction whose model request fails, a
//! client that advertises `session.compaction` with a value of the wrong type, a session
//! recorded with compaction updates loaded by a client that takes none.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{ClientCapabilities, InitializeRequest, LoadSessionRequest};
use serde_json::json;

use crate::compaction::{caps, compactions, live, told_in_words, turns};
use crate::harness::transport;

#[tokio::test]
async fn a_compaction_whose_request_fails_ends_failed() {
    // Codex's compaction asks the model with this prompt: the mock answers it with HTTP 400.
    let mut live = live(&["-c", "compact_prompt=scenario:http400 summarize"]);
    let caps = serde_json::to_value(caps(true)).unwrap();
    let answers = turns(&mut live, caps, &["scenario:plain one", "scenario:plain two"]).await;
    let seen = compactions(&live.updates);
    if transport() == "exec" {
        assert!(seen.is_empty(), "{seen:?}");
        return;
    }
    assert!(!seen.is_empty(), "no compaction: {:?}", live.updates.json());
    assert_eq!(seen[0]["status"], "in_progress", "{seen:?}");
    let last = seen.last().unwrap();
    assert_eq!(last["status"], "failed", "{seen:?}");
    assert!(
        last["error"]
            .as_str()
            .is_some_and(|e| e.contains("mock bad request")),
        "{last}"
    );
    // The turn that needed the compaction fails with Codex's words.
    let failed = answers[1].as_ref().expect_err("the second turn fails");
    assert!(failed.message.contains("mock bad request"), "{failed:?}");
}

#[tokio::test]
async fn compaction_advertised_with_the_wrong_type_means_no_compaction_updates() {
    for wrong in [json!(true), json!("yes"), json!([1])] {
        let mut live = live(&[]);
        let caps = json!({"session": {"compaction": wrong, "notices": {}}});
        turns(&mut live, caps, &["scenario:plain one", "scenario:plain two"]).await;
        assert!(
            compactions(&live.updates).is_empty(),
            "{wrong}: {:?}",
            live.updates.json()
        );
        if transport() != "exec" {
            assert!(told_in_words(&live.updates), "{wrong}: {:?}", live.updates.json());
        }
    }
}

#[tokio::test]
async fn a_load_by_a_client_without_compaction_updates_gets_the_notice_instead() {
    let mut live = live(&[]);
    let caps_with = serde_json::to_value(caps(true)).unwrap();
    turns(
        &mut live,
        caps_with,
        &["scenario:plain one", "scenario:plain two"],
    )
    .await;
    let recorded = compactions(&live.updates);
    let session = live.updates.all_with_sessions()[0].0.clone();
    live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    live.respawn();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    live.acplb
        .client(&updates, async |cx| {
            let caps = ClientCapabilities::new();
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            cx.send_request(LoadSessionRequest::new(session.clone(), &ws))
                .block_task()
                .await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(compactions(&live.updates).is_empty(), "{:?}", live.updates.json());
    if transport() != "exec" {
        assert!(!recorded.is_empty(), "the first client saw no compaction");
        let said = live
            .updates
            .json()
            .iter()
            .any(|u| u.to_string().contains("was compacted"));
        assert!(said, "{:?}", live.updates.json());
    }
}
