//! `auth/status` (unstable ACP, ADR 0037) backed by Codex's account (`account/read`, on exec
//! through a `codex app-server` of its own): unauthenticated before a sign-in, the API-key
//! account after one (never the key), unauthenticated again after `logout`; a provider with its
//! own key needs none. Both transports. `_auth/status_update` (ADR 0043) tells the client of
//! each change, and only of changes.

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AuthStatusRequest, AuthenticateRequest, InitializeRequest, LogoutRequest,
};
use serde_json::Value;

use crate::harness::{eventually, initialize_json};
use crate::live::Live;
use crate::login::{key_meta, needs_openai_sign_in, test_key};

/// `auth/status`'s answer, as JSON.
async fn status(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
) -> Result<Value, agent_client_protocol::Error> {
    let answer = cx.send_request(AuthStatusRequest::new()).block_task().await?;
    Ok(serde_json::to_value(answer).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_status_follows_a_sign_in_and_a_sign_out_and_never_shows_the_key() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    needs_openai_sign_in(&live.env.home());
    let key = test_key();
    let updates = live.updates.clone();
    let k = key.clone();
    let seen = live
        .acplb
        .client(&updates, async |cx| {
            let init = initialize_json(&cx).await?;
            assert!(init["agentCapabilities"]["auth"]["status"].is_object(), "{init}");
            assert!(
                init["agentCapabilities"]["auth"]["_meta"]["authStatus"].is_object(),
                "{init}"
            );
            let before = status(&cx).await?;
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&k)))
                .block_task()
                .await?;
            let signed_in = status(&cx).await?;
            cx.send_request(LogoutRequest::new()).block_task().await?;
            let after = status(&cx).await?;
            Ok((before, signed_in, after))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let (before, signed_in, after) = seen;
    assert_eq!(before["state"], "unauthenticated", "{before}");
    assert_eq!(signed_in["state"], "authenticated", "{signed_in}");
    assert_eq!(signed_in["accounts"][0]["label"], "OpenAI API key", "{signed_in}");
    assert_eq!(signed_in["accounts"][0]["active"], true, "{signed_in}");
    assert!(!signed_in.to_string().contains(&key), "the key is in the status");
    assert_eq!(after["state"], "unauthenticated", "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_with_its_own_key_needs_no_sign_in() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let answer = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            status(&cx).await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(answer["state"], "not_required", "{answer}");
    assert!(answer.get("accounts").is_none(), "no account: {answer}");
}

/// The states of the `_auth/status_update`s received so far.
fn states(updates: &std::sync::Mutex<Vec<Value>>) -> Vec<String> {
    updates
        .lock()
        .unwrap()
        .iter()
        .map(|u| u["state"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_is_told_of_each_change_of_sign_in_and_only_of_changes() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    needs_openai_sign_in(&live.env.home());
    let key = test_key();
    let updates = live.updates.clone();
    let told = live.acplb.auth_updates.clone();
    let k = key.clone();
    let t = told.clone();
    live.acplb
        .client(&updates, async |cx| {
            initialize_json(&cx).await?;
            let limit = std::time::Duration::from_secs(30);
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&k)))
                .block_task()
                .await?;
            assert!(
                eventually(limit, || states(&t).len() == 1).await,
                "{:?}",
                states(&t)
            );
            cx.send_request(LogoutRequest::new()).block_task().await?;
            assert!(
                eventually(limit, || states(&t).len() == 2).await,
                "{:?}",
                states(&t)
            );
            // Signed out again: nothing changed, so nothing is told; the next sign-in is.
            cx.send_request(LogoutRequest::new()).block_task().await?;
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&k)))
                .block_task()
                .await?;
            assert!(
                eventually(limit, || states(&t).len() >= 3).await,
                "{:?}",
                states(&t)
            );
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(
        states(&told),
        ["authenticated", "unauthenticated", "authenticated"],
        "{:?}",
        told.lock().unwrap()
    );
    let first = told.lock().unwrap()[0].clone();
    assert_eq!(first["accounts"][0]["label"], "OpenAI API key", "{first}");
    assert_eq!(first["authStatus"]["kind"], "api_key", "{first}");
    assert_eq!(told.lock().unwrap()[1]["authStatus"]["kind"], "none");
    assert!(
        !format!("{:?}", told.lock().unwrap()).contains(&key),
        "the key is in an update"
    );
}
