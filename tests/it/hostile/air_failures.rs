//! Typed session failures (ADR 0054) under faults: a Codex that dies is a `transport_lost`
//! failure the editor can retry, not an error; a sign-in that is needed stays the
//! `auth_required` error that names the ways in; a declaration without AIR's version, and a
//! cancelled turn, get no failure.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, NewSessionRequest, PromptRequest};
use serde_json::json;

use super::stand_in::{fake_codex, spawn_app_server};
use crate::air::air;
use crate::air_failures::{failing, failure_of, warnings};
use crate::harness::Updates;
use crate::live::Live;

#[tokio::test]
async fn a_codex_that_dies_is_a_connection_failure_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        "echo 'panic: the stand-in crashed on purpose' >&2\nexit 3",
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let answers = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(air(&["sessionFailure"])),
            )
            .block_task()
            .await?;
            let s = cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
            let mut answers = Vec::new();
            for text in ["hello", "hello again"] {
                let answer = cx
                    .send_request(PromptRequest::new(s.session_id.clone(), vec![text.into()]))
                    .block_task()
                    .await?;
                answers.push(serde_json::to_value(answer).unwrap());
            }
            Ok(answers)
        })
        .await
        .unwrap_or_else(|e| panic!("the death is an answer, not an error: {e:?}"));
    let mut ids = Vec::new();
    for answer in &answers {
        assert_eq!(answer["stopReason"], "end_turn", "{answer}");
        let failure = failure_of(answer).unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(failure["category"], "connection", "{failure}");
        assert_eq!(failure["actions"], json!(["retry", "new_session"]), "{failure}");
        assert_eq!(failure["severity"], "error");
        let title = failure["title"].as_str().unwrap();
        assert!(title.contains("exit status: 3"), "{title}");
        assert!(title.chars().count() <= 240, "{title}");
        ids.push(failure["id"].clone());
    }
    assert_ne!(ids[0], ids[1], "each turn's failure is an incident of its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_needed_sign_in_stays_the_error_that_names_the_ways_in() {
    let mut live = Live::start();
    let (mut answers, _) = failing(&mut live, &["sessionFailure"], &["scenario:http401 hi"]).await;
    let err = answers.pop().unwrap().expect_err("auth stays an error");
    let data = err.data.unwrap();
    assert_eq!(data["reason"], "auth_required", "{data}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_turn_and_an_unversioned_declaration_get_no_failure() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    // Declared without AIR's version: no capability, so the failure stays an error.
    let unversioned: agent_client_protocol::v1::schema::ClientCapabilities = serde_json::from_value(
        json!({"_meta": {"jetbrains": {"air": {"capabilities": ["sessionFailure"]}}}}),
    )
    .unwrap();
    let result = live
        .acplb
        .client(&updates, async |cx| {
            let (_, id) = crate::air_reports::opened(&cx, &ws, unversioned).await?;
            Ok(cx
                .send_request(PromptRequest::new(id, vec!["scenario:ctxwindow too long".into()]))
                .block_task()
                .await)
        })
        .await
        .unwrap();
    assert!(result.is_err(), "{result:?}");
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let answer = live
        .acplb
        .client(&updates, async |cx| {
            let (_, id) = crate::air_reports::opened(&cx, &ws, air(&["sessionFailure"])).await?;
            let asked = cx.send_request(PromptRequest::new(id.clone(), vec!["scenario:sleep 30".into()]));
            cx.send_notification(agent_client_protocol::v1::schema::CancelNotification::new(id))?;
            asked.block_task().await
        })
        .await
        .unwrap();
    let answer = serde_json::to_value(answer).unwrap();
    assert_eq!(answer["stopReason"], "cancelled", "{answer}");
    assert!(failure_of(&answer).is_none(), "{answer}");
}

/// A model error that quotes a key: neither the retries' warnings nor the failure carry it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_that_quotes_a_key_is_told_without_it() {
    const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    let scenario = format!(
        "[scenarios.leaky]\ndescription = \"response.failed quoting a key\"\n[[scenarios.leaky.steps]]\nactions = [{{ type = \"failed\", code = \"server_error\", message = \"upstream refused OPENAI_API_KEY={KEY}\" }}]\n"
    );
    let mut live = Live::start_with(
        crate::atm::mock_config_with(&scenario),
        &["-c", "model_providers.mock.stream_max_retries=2"],
        &[],
    );
    let (mut answers, _) = failing(&mut live, &["sessionFailure"], &["scenario:leaky hi"]).await;
    let answer = answers.pop().unwrap().expect("a typed failure");
    let failure = failure_of(&answer).unwrap_or_else(|| panic!("{answer}"));
    let everything = format!("{answer} {:?}", live.updates.json());
    assert!(
        !everything.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
        "{everything}"
    );
    let warnings = warnings(&live.updates);
    if crate::harness::transport() == "app-server" {
        assert!(!warnings.is_empty(), "retried: {everything}");
        assert!(
            warnings
                .iter()
                .chain([&failure])
                .any(|w| w.to_string().contains("[REDACTED]")),
            "Codex quoted it, acplb took it out: {warnings:?} {failure}"
        );
    }
}
