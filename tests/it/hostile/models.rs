//! A Codex whose `model/list` fails or answers garbage: `session/new` still opens, the model
//! option offers the models acplb knows of Codex 0.169.0, and the log says why (both transports:
//! on exec the list comes from a `codex app-server` started for the question).

use std::path::Path;

use crate::harness::{Acplb, Updates, eventually, open_session};
use crate::models::values;

use super::stand_in::{app_server_listing, spawn_app_server};

/// The models a session offers when Codex's list is `on_list`, and acplb's stderr once it said
/// `why` (Codex is asked behind the session's opening).
async fn model_option_with(dir: &Path, on_list: &str, why: &str, transport: &str) -> (Vec<String>, String) {
    let codex = app_server_listing(dir, "", on_list);
    let mut acplb: Acplb = if transport == "exec" {
        let vars = vec![("ACPLB_CODEX".to_owned(), codex.display().to_string())];
        Acplb::spawn(&["--transport", "exec"], &vars, dir)
    } else {
        spawn_app_server(dir, &codex, &[])
    };
    let cwd = dir.to_owned();
    let stderr = acplb.stderr_reader();
    let session = acplb
        .client(&Updates::default(), async |cx| {
            let session = open_session(&cx, &cwd).await?.1;
            // Connected until Codex was asked (behind the opening) and acplb said why not.
            eventually(std::time::Duration::from_secs(20), || stderr().contains(why)).await;
            Ok(session)
        })
        .await
        .expect("session/new opens although the list failed");
    (values(&session, "model"), acplb.stderr())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_list_that_is_garbage_or_refused_falls_back_with_a_warning() {
    let answers = [
        (
            r#"echo "{\"id\":$i,\"result\":{\"data\":\"every model\"}}""#,
            "without a list of models",
        ),
        (
            r#"echo "{\"id\":$i,\"result\":{\"data\":[{\"hidden\":false},{\"model\":\"\"}]}}""#,
            "listed no models",
        ),
        (super::stand_in::NO_MODEL_LIST, "no model/list here"),
    ];
    for transport in ["app-server", "exec"] {
        for (on_list, why) in answers {
            let dir = tempfile::tempdir().unwrap();
            let (models, stderr) = model_option_with(dir.path(), on_list, why, transport).await;
            assert!(
                models.iter().any(|m| m == "gpt-6.1-sol"),
                "{transport}: the compiled-in list is offered: {models:?}\n{stderr}"
            );
            assert!(stderr.contains(why), "{transport}: {why}\n{stderr}");
            assert!(
                stderr.contains("the model option offers the models acplb knows"),
                "{transport}: {stderr}"
            );
        }
    }
}

/// A Codex that never answers `model/list` does not hold `session/new` up: the session opens
/// with what acplb offers before any list (Codex is asked behind the answer, for up to 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_list_that_never_comes_does_not_hold_a_session_up() {
    for transport in ["app-server", "exec"] {
        let dir = tempfile::tempdir().unwrap();
        let codex = app_server_listing(dir.path(), "", ":");
        let mut acplb: Acplb = if transport == "exec" {
            let vars = vec![("ACPLB_CODEX".to_owned(), codex.display().to_string())];
            Acplb::spawn(&["--transport", "exec"], &vars, dir.path())
        } else {
            spawn_app_server(dir.path(), &codex, &[])
        };
        let cwd = dir.path().to_owned();
        let opened = acplb
            .client(&Updates::default(), async |cx| {
                // Well inside the 10 s an ask may take: an opening that waited for it fails here.
                let open = open_session(&cx, &cwd);
                Ok(tokio::time::timeout(std::time::Duration::from_secs(5), open).await)
            })
            .await
            .unwrap();
        let session = opened
            .unwrap_or_else(|_| panic!("{transport}: session/new waited for the model list"))
            .expect("session/new opens")
            .1;
        assert!(
            values(&session, "model").iter().any(|m| m == "gpt-6.1-sol"),
            "{transport}: {}",
            acplb.stderr()
        );
    }
}

/// A list whose recommendations are odd: a hidden model marked default, a default effort that is
/// a number, one the model does not support. An AIR client that asked for recommended values is
/// recommended only what the options offer, and the session opens as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_recommendations_recommend_only_what_is_offered() {
    use agent_client_protocol::schema::ProtocolVersion;
    use agent_client_protocol::v1::schema::{InitializeRequest, NewSessionRequest};
    use serde_json::Value;

    let list = r#"echo "{\"id\":$i,\"result\":{\"data\":[{\"model\":\"m-hidden\",\"hidden\":true,\"isDefault\":true,\"defaultReasoningEffort\":\"low\"},{\"model\":\"m-a\",\"defaultReasoningEffort\":42,\"supportedReasoningEfforts\":[{\"reasoningEffort\":\"low\"}]},{\"model\":\"m-b\",\"isDefault\":true,\"defaultReasoningEffort\":\"ultra\",\"supportedReasoningEfforts\":[{\"reasoningEffort\":\"high\"}]}]}}""#;
    let dir = tempfile::tempdir().unwrap();
    let codex = app_server_listing(dir.path(), "", list);
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let (cwd, updates) = (dir.path().to_owned(), Updates::default());
    let option = |id: &str| {
        updates
            .json()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == "config_option_update")
            .filter_map(|u| {
                u["configOptions"]
                    .as_array()
                    .and_then(|all| all.iter().find(|o| o["id"] == id).cloned())
            })
            .next_back()
            .unwrap_or(Value::Null)
    };
    let (model, effort) = acplb
        .client(&updates, async |cx| {
            let caps = crate::air::air(&["recommendedValue"]);
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            cx.send_request(NewSessionRequest::new(&cwd)).block_task().await?;
            let listed = || option("model").to_string().contains("m-b");
            assert!(
                eventually(std::time::Duration::from_secs(20), listed).await,
                "Codex's list came"
            );
            Ok((option("model"), option("reasoning_effort")))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    let recommended = |o: &Value| o["_meta"]["jetbrains"]["air"]["recommendedValue"].clone();
    assert_eq!(
        recommended(&model),
        "m-b",
        "the default Codex lists, not the hidden one: {model}"
    );
    assert!(!model.to_string().contains("m-hidden"), "{model}");
    assert!(recommended(&effort).is_null(), "`ultra` is not offered: {effort}");
}
