//! `_auth/status_update` under bad input (ADR 0043): a sign-in that fails (no key, an unknown
//! method) changes nothing and tells nothing; the next good one is told once; a client that
//! hangs up right after signing in leaves acplb to exit cleanly. Both transports.

use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::AuthenticateRequest;

use crate::harness::{eventually, initialize_json};
use crate::live::Live;
use crate::login::{key_meta, needs_openai_sign_in, test_key};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_tell_nothing_and_a_hang_up_after_one_is_clean() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    needs_openai_sign_in(&live.env.home());
    let key = test_key();
    let updates = live.updates.clone();
    let told = live.acplb.auth_updates.clone();
    let t = told.clone();
    live.acplb
        .client(&updates, async |cx| {
            initialize_json(&cx).await?;
            let blank = cx
                .send_request(AuthenticateRequest::new("api-key").meta(key_meta("  ")))
                .block_task()
                .await
                .expect_err("a blank key is refused");
            assert!(blank.message.to_lowercase().contains("key"), "{}", blank.message);
            let unknown = cx
                .send_request(AuthenticateRequest::new("carrier-pigeon"))
                .block_task()
                .await
                .expect_err("an unknown method is refused");
            assert!(
                unknown.message.contains("api-key"),
                "names the known ones: {}",
                unknown.message
            );
            cx.send_request(AuthenticateRequest::new("api-key").meta(key_meta(&key)))
                .block_task()
                .await?;
            let one = eventually(Duration::from_secs(30), || !t.lock().unwrap().is_empty()).await;
            assert!(one, "the good sign-in is told");
            // Hang up at once.
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let states: Vec<_> = told.lock().unwrap().iter().map(|u| u["state"].clone()).collect();
    assert_eq!(states, ["authenticated"], "only the change is told: {states:?}");
    let (code, _) = live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    assert!(
        !live.acplb.stderr().contains("panicked"),
        "{}",
        live.acplb.stderr()
    );
}
