//! A Codex whose `model/list` fails or answers garbage: `session/new` still opens, the model
//! option offers the models acplb knows of Codex 0.169.0, and the log says why (both transports:
//! on exec the list comes from a `codex app-server` started for the question).

use std::path::Path;

use crate::harness::{Acplb, Updates, open_session};
use crate::models::values;

use super::stand_in::{app_server_listing, spawn_app_server};

async fn model_option_with(dir: &Path, on_list: &str, transport: &str) -> (Vec<String>, String) {
    let codex = app_server_listing(dir, "", on_list);
    let mut acplb: Acplb = if transport == "exec" {
        let vars = vec![("ACPLB_CODEX".to_owned(), codex.display().to_string())];
        Acplb::spawn(&["--transport", "exec"], &vars, dir)
    } else {
        spawn_app_server(dir, &codex, &[])
    };
    let cwd = dir.to_owned();
    let session = acplb
        .client(&Updates::default(), async |cx| {
            Ok(open_session(&cx, &cwd).await?.1)
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
            let (models, stderr) = model_option_with(dir.path(), on_list, transport).await;
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
