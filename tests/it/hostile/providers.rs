//! `providers/*` fed what cannot be routed: each is refused as invalid params with the reason in
//! the JSON-RPC message, nothing of it is kept (a session opened after still reaches Codex's own
//! provider), and a gateway that is not there fails the prompt with an error instead of a hang.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    DisableProviderRequest, InitializeRequest, LlmProtocol, NewSessionRequest, SetProviderRequest, StopReason,
};

use crate::harness::prompt;
use crate::live::Live;

fn set(id: &str, api: LlmProtocol, url: &str, headers: &[(&str, &str)]) -> SetProviderRequest {
    SetProviderRequest::new(id.to_owned(), api, url).headers(
        headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<HashMap<_, _>>(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_cannot_be_routed_is_refused_with_the_reason_and_nothing_is_kept() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let refusals = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let mut refusals = Vec::new();
            for req in [
                set("anthropic", LlmProtocol::OpenAi, "https://gw.example/v1", &[]),
                set("openai", LlmProtocol::Bedrock, "https://gw.example/v1", &[]),
                set("openai", LlmProtocol::OpenAi, "file:///etc/passwd", &[]),
                set(
                    "openai",
                    LlmProtocol::OpenAi,
                    "https://gw.example/v1?token=abc",
                    &[],
                ),
                set(
                    "openai",
                    LlmProtocol::OpenAi,
                    "https://gw.example/v1",
                    &[("X-A", "v\r\nX-Injected: 1")],
                ),
                set(
                    "openai",
                    LlmProtocol::OpenAi,
                    "https://gw.example/v1",
                    &[("no good", "v")],
                ),
            ] {
                let err = cx.send_request(req).block_task().await.expect_err("refused");
                refusals.push((i32::from(err.code), err.message));
            }
            let err = cx
                .send_request(DisableProviderRequest::new("openai"))
                .block_task()
                .await
                .expect_err("required");
            refusals.push((i32::from(err.code), err.message));
            // Nothing refused was kept: a new session reaches Codex's configured provider.
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let r = prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok(refusals)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let expected = [
        "unknown provider `anthropic`",
        "only the OpenAI protocol",
        "http(s) URL",
        "query parameter `token`",
        "line break",
        "not a valid HTTP header name",
        "provider `openai` is required",
    ];
    for ((code, message), want) in refusals.iter().zip(expected) {
        assert_eq!(*code, -32602, "{message}");
        assert!(message.contains(want), "`{message}` should say `{want}`");
    }
    assert_eq!(
        live.mock
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/responses"))
            .count(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_that_is_not_there_fails_the_prompt_with_an_error() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    // A port that was free a moment ago: nothing answers there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let started = Instant::now();
    let outcome = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            cx.send_request(set(
                "openai",
                LlmProtocol::OpenAi,
                &format!("http://{closed}/v1"),
                &[],
            ))
            .block_task()
            .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            Ok(prompt(&cx, &s.session_id, "hello").await)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let waited = started.elapsed();
    let message = match outcome {
        Err(e) => e.message,
        Ok(r) => panic!("the prompt ended {:?}: {}", r.stop_reason, updates.agent_text()),
    };
    assert!(
        waited < Duration::from_secs(120),
        "the prompt took {waited:?}: {message}"
    );
    assert!(
        message.to_lowercase().contains("connect") || message.contains("error sending request"),
        "the error says the model could not be reached: {message}"
    );
    assert!(
        live.mock.requests().is_empty(),
        "nothing went to Codex's configured provider"
    );
}
