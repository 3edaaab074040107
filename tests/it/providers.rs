//! ACP's unstable `providers/*`, both transports: the editor sends Codex's model traffic to a
//! gateway of its own (here a second mock model) with a header holding a key. Sessions opened
//! after `providers/set` reach the gateway with the header; one opened before keeps Codex's
//! configured provider; the key is in no file acplb writes, no log and no transcript.

use std::collections::HashMap;
use std::path::PathBuf;

use acplb_playback::mock_model::{MockConfig, MockModel};
use agent_client_protocol::v1::schema::{
    ListProvidersRequest, LlmProtocol, NewSessionRequest, SetProviderRequest, StopReason,
};

use crate::harness::{initialize_json, prompt};
use crate::live::Live;
use crate::login::files_containing;

/// A key no other test uses.
fn gateway_key() -> String {
    format!("gw-key-{}-{}", std::process::id(), line!())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_set_by_the_editor_gets_the_traffic_of_sessions_opened_after_it() {
    let (mut live, transcripts) = Live::start_traced();
    let gateway = MockModel::start(MockConfig::default()).expect("the gateway mock starts");
    let key = gateway_key();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (gateway_url, k) = (gateway.base_url(), key.clone());
    let (listed_native, listed_gateway) = live
        .acplb
        .client(&updates, async |cx| {
            let init = initialize_json(&cx).await?;
            assert!(init["agentCapabilities"]["providers"].is_object(), "{init}");
            let before = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let native = cx.send_request(ListProvidersRequest::new()).block_task().await?;
            let headers = HashMap::from([("Authorization".to_owned(), format!("Bearer {k}"))]);
            cx.send_request(
                SetProviderRequest::new("openai", LlmProtocol::OpenAi, &gateway_url).headers(headers),
            )
            .block_task()
            .await?;
            let routed = cx.send_request(ListProvidersRequest::new()).block_task().await?;
            let after = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let r = prompt(&cx, &after.session_id, "scenario:plain hello").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            let r = prompt(&cx, &before.session_id, "scenario:plain hello").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok((
                serde_json::to_value(&native).unwrap(),
                serde_json::to_value(&routed).unwrap(),
            ))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let slot = |v: &serde_json::Value| v["providers"][0].clone();
    assert_eq!(slot(&listed_native)["providerId"], "openai", "{listed_native}");
    assert_eq!(slot(&listed_native)["required"], true, "{listed_native}");
    assert_eq!(
        slot(&listed_gateway)["current"]["baseUrl"],
        gateway.base_url(),
        "{listed_gateway}"
    );
    assert!(
        !listed_gateway.to_string().contains(&key),
        "a listing never shows a header value"
    );
    // The session opened after the call reached the gateway, with the key; the one opened
    // before stayed on Codex's configured provider.
    let at_gateway = gateway.requests();
    let model_calls = |r: &[acplb_playback::mock_model::LoggedRequest]| {
        r.iter().filter(|r| r.path.ends_with("/responses")).count()
    };
    assert_eq!(model_calls(&at_gateway), 1, "exactly the later session's turn");
    assert!(
        at_gateway
            .iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {key}"))),
        "the gateway got the editor's header"
    );
    assert_eq!(
        model_calls(&live.mock.requests()),
        1,
        "the earlier session kept its provider"
    );
    // Nowhere acplb writes: its log (at trace), its state, its transcripts.
    assert!(!live.acplb.stderr().contains(&key), "the key is in acplb's log");
    assert_eq!(files_containing(&live.state_dir(), &key), Vec::<PathBuf>::new());
    assert_eq!(files_containing(transcripts.path(), &key), Vec::<PathBuf>::new());
}
