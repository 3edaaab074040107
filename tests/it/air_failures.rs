//! AIR's typed session failures (ADR 0054), end to end with the real Codex and the mock model on
//! the transport of this run: a client that declared `sessionFailure` gets a failed turn as
//! `end_turn` with the failure (id, revision, category, severity, title, actions) in the
//! response's `_meta`, not as an error; on app-server each retry before it is a typed warning of
//! the same incident. Other clients keep the error. Faults are in `hostile/air_failures.rs`.

use agent_client_protocol::v1::schema::PromptRequest;
use serde_json::{Value, json};

use crate::air::air;
use crate::air_reports::opened;
use crate::harness::transport;
use crate::live::Live;

/// The AIR failure an update or a response's `_meta` carries.
pub(crate) fn failure_of(value: &Value) -> Option<Value> {
    let f = &value["_meta"]["jetbrains"]["air"]["sessionFailure"];
    (!f.is_null()).then(|| f.clone())
}

/// The typed failures (retry warnings) the session's updates told of.
pub(crate) fn warnings(updates: &crate::harness::Updates) -> Vec<Value> {
    updates
        .of_kind("session_info_update")
        .iter()
        .filter_map(failure_of)
        .collect()
}

/// The prompts `texts` in one session of a client that declared `capabilities`: each answer
/// (as JSON) or error, and the `initialize` answer.
pub(crate) async fn failing(
    live: &mut Live,
    capabilities: &[&str],
    texts: &[&str],
) -> (Vec<Result<Value, agent_client_protocol::Error>>, Value) {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let client = air(capabilities);
    let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    live.acplb
        .client(&updates, async |cx| {
            let (init, id) = opened(&cx, &ws, client).await?;
            let mut answers = Vec::new();
            for text in &texts {
                let answer = cx
                    .send_request(PromptRequest::new(id.clone(), vec![text.as_str().into()]))
                    .block_task()
                    .await
                    .map(|a| serde_json::to_value(a).unwrap());
                answers.push(answer);
            }
            Ok((answers, init))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_ends_with_its_typed_failure_and_is_listed() {
    let mut live = Live::start();
    let (mut answers, init) = failing(
        &mut live,
        &["sessionFailure"],
        &["scenario:ctxwindow too long", "scenario:plain hello"],
    )
    .await;
    let next = answers.pop().unwrap().unwrap();
    let answer = answers
        .pop()
        .unwrap()
        .expect("a typed failure is an answer, not an error");
    assert_eq!(answer["stopReason"], "end_turn", "{answer}");
    let failure = failure_of(&answer).unwrap_or_else(|| panic!("no failure: {answer}"));
    assert_eq!(answer["_meta"]["jetbrains"]["air"]["version"], 1);
    assert_eq!(failure["severity"], "error");
    assert_eq!(failure["revision"], 1, "{failure}");
    assert!(
        failure["title"]
            .as_str()
            .is_some_and(|t| t.contains("context window")),
        "{failure}"
    );
    assert!(
        failure["id"].as_str().is_some_and(|id| id.ends_with(":error")),
        "{failure}"
    );
    if transport() == "app-server" {
        // Codex says `contextWindowExceeded`.
        assert_eq!(failure["category"], "limit", "{failure}");
        assert_eq!(failure["actions"], json!(["new_session"]), "{failure}");
    } else {
        // `codex exec --json` gives the message alone.
        assert_eq!(failure["category"], "service", "{failure}");
        assert_eq!(failure["actions"], json!(["retry"]), "{failure}");
    }
    let listed = &init["_meta"]["jetbrains"]["air"]["capabilities"];
    assert!(
        listed
            .as_array()
            .is_some_and(|l| l.contains(&json!("sessionFailure"))),
        "{init}"
    );
    // The next prompt runs as ever.
    assert_eq!(next["stopReason"], "end_turn");
    assert!(failure_of(&next).is_none(), "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_are_warnings_of_the_incident_the_failure_ends() {
    let mut live = Live::start_with(
        acplb_playback::mock_model::MockConfig::default(),
        &[
            "-c",
            "model_providers.mock.request_max_retries=2",
            "-c",
            "model_providers.mock.stream_max_retries=2",
        ],
        &[],
    );
    let (mut answers, _) = failing(&mut live, &["sessionFailure"], &["scenario:respfailed hi"]).await;
    let answer = answers.pop().unwrap().expect("a typed failure is an answer");
    let failure = failure_of(&answer).unwrap_or_else(|| panic!("no failure: {answer}"));
    assert_eq!(failure["severity"], "error");
    assert_eq!(failure["category"], "service", "{failure}");
    let warnings = warnings(&live.updates);
    if transport() == "app-server" {
        assert_eq!(warnings.len(), 2, "one per retry: {warnings:?}");
        for (n, w) in warnings.iter().enumerate() {
            assert_eq!(w["severity"], "warning", "{w}");
            assert_eq!(w["revision"], n + 1, "{w}");
            assert_eq!(w["id"], failure["id"], "one incident: {w}");
            assert_eq!(w["actions"], json!([]), "{w}");
        }
        assert_eq!(
            failure["revision"], 3,
            "the failure goes on the warnings: {failure}"
        );
        let as_text = live
            .updates
            .json()
            .into_iter()
            .filter(|u| u["sessionUpdate"] != "session_info_update")
            .any(|u| u.to_string().contains("Reconnecting"));
        assert!(!as_text, "a retry is not text as well: {:?}", live.updates.json());
    } else {
        assert!(warnings.is_empty(), "exec tells of no retries: {warnings:?}");
        assert_eq!(failure["revision"], 1, "{failure}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_typed_failures_keeps_the_error() {
    let mut live = Live::start();
    let (mut answers, init) = failing(
        &mut live,
        &["agentFileChangeReport"],
        &["scenario:ctxwindow too long"],
    )
    .await;
    let err = answers.pop().unwrap().expect_err("still an error");
    assert!(err.message.contains("context window"), "{err:?}");
    assert!(
        init["_meta"]["jetbrains"]["air"]["capabilities"]
            .as_array()
            .is_some_and(|l| l.contains(&json!("sessionFailure"))),
        "listed to any AIR client: {init}"
    );
}
