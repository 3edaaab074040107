//! Sign-ins that go wrong, with the real Codex (both transports) and the stand-in for
//! auth.openai.com: a method acplb does not offer, a key that is empty or not a string (never
//! echoed), a device code that expires, a page the user declines, a sign-in the client cancels
//! half-way (`$/cancel_request`), a logout while nothing runs, and a client that goes away in
//! the middle of a sign-in. None leaves anyone signed in, and acplb serves on.

use std::sync::Arc;
use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::{AuthenticateRequest, LogoutRequest};
use serde_json::json;

use crate::harness::eventually;
use crate::live::Live;
use crate::login::{
    Elicitations, Issuer, USER_CODE, eliciting_client, init_with_urls, initialize, key_meta,
    needs_openai_sign_in, test_key,
};

/// Whether Codex's auth.json in `home` holds a ChatGPT sign-in.
fn chatgpt_signed_in(home: &std::path::Path) -> bool {
    std::fs::read_to_string(home.join("auth.json")).is_ok_and(|a| a.contains("\"auth_mode\": \"chatgpt\""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_methods_and_empty_or_odd_keys_are_refused_and_a_good_key_then_works() {
    let mut live = Live::start();
    needs_openai_sign_in(&live.env.home());
    let home = live.env.home();
    let key = test_key();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let refused =
                async |req: AuthenticateRequest| cx.send_request(req).block_task().await.unwrap_err();
            let err = refused(AuthenticateRequest::new("password")).await;
            assert_eq!(i32::from(err.code), -32602, "{err:?}");
            assert!(
                err.message.contains("unknown authentication method `password`"),
                "{err:?}"
            );
            assert_eq!(
                err.data.unwrap()["authMethods"],
                json!(["chatgpt-device-code", "api-key"])
            );
            // The terminal sign-in is the client's to run, not `authenticate`'s.
            let err = refused(AuthenticateRequest::new("codex-login")).await;
            assert!(err.message.contains("acplb login"), "{err:?}");
            for meta in [key_meta(""), key_meta("   "), key_meta("sk-with\nnewline")] {
                let err = refused(AuthenticateRequest::new("api-key").meta(meta)).await;
                assert_eq!(i32::from(err.code), -32602, "{err:?}");
                assert!(!err.message.contains("sk-"), "{err:?}");
            }
            let mut odd = serde_json::Map::new();
            odd.insert("api-key".into(), json!({"value": "sk-nested"}));
            let err = refused(AuthenticateRequest::new("api-key").meta(odd)).await;
            assert!(err.message.contains("must be a string"), "{err:?}");
            assert!(!home.join("auth.json").exists(), "a refused key was stored");
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&key)))
                .block_task()
                .await?;
            Ok(())
        })
        .await
        .unwrap();
    assert!(
        std::fs::read_to_string(home.join("auth.json"))
            .unwrap()
            .contains(&key)
    );
}

/// A device-code sign-in against a stand-in whose code expires (`expire`), with a client that
/// accepts the page or declines it; the error `authenticate` ends with.
async fn refused_device_code(
    expire: bool,
    accept: bool,
) -> (Issuer, Live, Elicitations, agent_client_protocol::Error) {
    let issuer = Issuer::start(expire);
    let mut live = Live::start_with(MockConfig::default(), &[], &issuer.env());
    let seen = Elicitations::default();
    let err = eliciting_client(
        &mut live.acplb,
        &seen,
        accept,
        || {},
        async |cx| {
            cx.send_request(init_with_urls()).block_task().await?;
            Ok(cx
                .send_request(AuthenticateRequest::new("chatgpt-device-code"))
                .block_task()
                .await
                .unwrap_err())
        },
    )
    .await
    .unwrap();
    assert_eq!(err.data.as_ref().unwrap()["reason"], "auth_failed", "{err:?}");
    (issuer, live, seen, err)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_code_that_expires_fails_with_codexs_words_and_signs_nobody_in() {
    let (_issuer, live, seen, err) = refused_device_code(true, true).await;
    assert!(
        err.message.contains("did not succeed") && err.message.contains("400"),
        "{err:?}"
    );
    // The page the editor showed is closed all the same.
    assert_eq!(seen.completed.lock().unwrap().len(), 1);
    assert!(!chatgpt_signed_in(&live.env.home()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_page_stops_the_sign_in_so_a_code_entered_later_signs_nobody_in() {
    let (issuer, live, _seen, err) = refused_device_code(false, false).await;
    assert!(err.message.contains("declined"), "{err:?}");
    // Codex stopped asking: a code entered now grants nothing.
    let polls = issuer.polls();
    issuer.approve();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(issuer.polls(), polls, "Codex still polls a cancelled sign-in");
    assert!(!chatgpt_signed_in(&live.env.home()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_cancelled_half_way_stops_and_a_logout_with_nothing_running_succeeds() {
    let issuer = Issuer::start(false);
    let mut live = Live::start_with(MockConfig::default(), &[], &issuer.env());
    let home = live.env.home();
    let updates = live.updates.clone();
    let polls = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            // Nobody is signed in and nothing runs: logout is a no-op that succeeds.
            cx.send_request(LogoutRequest::new()).block_task().await?;
            let err = cx
                .send_request(AuthenticateRequest::new("chatgpt-device-code"))
                .block_task()
                .await
                .unwrap_err();
            assert!(err.message.contains(USER_CODE), "{err:?}");
            // Chosen again, it waits for the user; the client gives up half-way.
            let waiting = cx.send_request(AuthenticateRequest::new("chatgpt-device-code"));
            let handle = waiting.cancellation_handle();
            let polled = issuer.polls();
            assert!(eventually(Duration::from_secs(10), || issuer.polls() > polled).await);
            handle.cancel().unwrap();
            let err = waiting.block_task().await.unwrap_err();
            assert!(
                err.message.contains("cancelled") || i32::from(err.code) == -32800,
                "{err:?}"
            );
            Ok(issuer.polls())
        })
        .await
        .unwrap();
    issuer.approve();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        issuer.polls() <= polls + 1,
        "Codex still polls a cancelled sign-in"
    );
    assert!(!chatgpt_signed_in(&home));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_mid_sign_in_leaves_acplb_exiting_and_no_codex_behind() {
    let issuer = Arc::new(Issuer::start(false));
    let mut live = Live::start_with(MockConfig::default(), &[], &issuer.env());
    let seen = Elicitations::default();
    let asked = seen.asked.clone();
    eliciting_client(
        &mut live.acplb,
        &seen,
        true,
        || {},
        async |cx| {
            cx.send_request(init_with_urls()).block_task().await?;
            let _pending = cx.send_request(AuthenticateRequest::new("chatgpt-device-code"));
            assert!(eventually(Duration::from_secs(10), || !asked.lock().unwrap().is_empty()).await);
            // The client hangs up with the sign-in under way.
            Ok(())
        },
    )
    .await
    .ok();
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    assert!(
        eventually(Duration::from_secs(10), || live.codex_left().is_empty()).await,
        "{:?}",
        live.codex_left()
    );
}
