//! The model option is what Codex's `model/list` says, on both transports: the listed models
//! (hidden ones left out, the configured one kept), each with its own reasoning efforts. A
//! session opens with the list Codex gave last and Codex is asked again behind it: a list that
//! changed reaches the session as a `config_option_update`.
//!
//! What changes the list of a running Codex: a provider's `model_catalog_url`, which Codex
//! fetches and caches in `$CODEX_HOME/models_cache.json` (five minutes). `model_catalog_json` is
//! read only when Codex starts, so a warm app-server would never see it change. The test serves
//! the catalog on 127.0.0.1 and, between the two sessions, changes it and removes Codex's cache
//! (what the cache's expiry does).

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    NewSessionRequest, SessionConfigOptionValue, SetSessionConfigOptionRequest,
};
use serde_json::{Value, json};

use crate::harness::{Updates, eventually, open_session, prompt};
use crate::live::{Live, assert_end_turn};

/// Serves the file at `path` (read at each request) to any GET on 127.0.0.1; its URL.
pub fn serve_catalog(path: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the catalog");
    let url = format!("http://{}/catalog", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0_u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let body = std::fs::read(&path).unwrap_or_default();
            let header = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(header.as_bytes()).ok();
            stream.write_all(&body).ok();
        }
    });
    url
}

/// Points the test's Codex at a catalog served from `url`.
pub fn use_catalog_url(home: &Path, url: &str) {
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen(
        "[model_providers.mock]\n",
        &format!("[model_providers.mock]\nmodel_catalog_url = \"{url}\"\n"),
        1,
    );
    assert!(text.contains("model_catalog_url"), "{text}");
    std::fs::write(config, text).unwrap();
}

/// A catalog entry Codex takes: the pinned Codex's own `gpt-5.5`, renamed, with these efforts
/// and visibility.
fn entry(template: &Value, slug: &str, efforts: &[&str], hidden: bool) -> Value {
    let mut e = template.clone();
    e["slug"] = json!(slug);
    e["display_name"] = json!(format!("Display {slug}"));
    e["visibility"] = json!(if hidden { "hide" } else { "list" });
    e["default_reasoning_level"] = json!(efforts[0]);
    e["supported_reasoning_levels"] = efforts
        .iter()
        .map(|x| json!({"effort": x, "description": format!("{x} effort")}))
        .collect();
    e
}

/// The bundled `gpt-5.5` entry of the pinned Codex (`codex debug models --bundled`).
pub fn template(live: &Live) -> Value {
    let out = std::process::Command::new(live.env.codex_path())
        .args(["debug", "models", "--bundled"])
        .envs(live.env.env_vars())
        .output()
        .expect("codex debug models runs");
    let all: Value = serde_json::from_slice(&out.stdout).expect("codex prints its catalog");
    all["models"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["slug"] == "gpt-5.5"))
        .cloned()
        .expect("the bundled catalog has gpt-5.5")
}

/// The values of config option `id` in a response's `configOptions`.
pub fn values(response: &impl serde::Serialize, id: &str) -> Vec<String> {
    let json = serde_json::to_value(response).unwrap();
    let option = json["configOptions"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("no option {id} in {json}"));
    option["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap().to_owned())
        .collect()
}

/// The model values of the last `config_option_update` session `id` got, once one offers
/// `model` (empty when none did within 20 s).
pub async fn updated_models(updates: &Updates, id: &str, model: &str) -> Vec<String> {
    let last = || {
        updates
            .all_with_sessions()
            .into_iter()
            .filter(|(s, u)| s == id && u["sessionUpdate"] == "config_option_update")
            .map(|(_, u)| values(&u, "model"))
            .next_back()
            .unwrap_or_default()
    };
    eventually(std::time::Duration::from_secs(20), || {
        last().iter().any(|m| m == model)
    })
    .await;
    last()
}

fn write_catalog(path: &Path, models: &[Value]) {
    std::fs::write(path, serde_json::to_vec(&json!({ "models": models })).unwrap()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_option_is_what_codex_lists_with_each_models_efforts_and_follows_a_change() {
    let mut live = Live::start();
    let template = template(&live);
    let catalog = live.env.root().join("catalog.json");
    write_catalog(
        &catalog,
        &[
            entry(&template, "mock-alpha", &["low", "medium"], false),
            entry(&template, "mock-beta", &["high"], true),
        ],
    );
    use_catalog_url(&live.env.home(), &serve_catalog(catalog.clone()));
    let ws = live.workspace();
    let home = live.env.home();
    let updates = live.updates.clone();
    let (first, listed, chosen, turn, second, relisted) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, first) = open_session(&cx, &ws).await?;
            let id = first.session_id.to_string();
            let listed = updated_models(&updates, &id, "mock-alpha").await;
            let chosen = cx
                .send_request(SetSessionConfigOptionRequest::new(
                    first.session_id.clone(),
                    "model",
                    SessionConfigOptionValue::ValueId {
                        value: "mock-alpha".into(),
                    },
                ))
                .block_task()
                .await?;
            let turn = prompt(&cx, &first.session_id, "hello").await;
            write_catalog(
                &catalog,
                &[
                    entry(&template, "mock-alpha", &["low", "medium"], false),
                    entry(&template, "mock-gamma", &["high", "xhigh"], false),
                ],
            );
            std::fs::remove_file(home.join("models_cache.json")).expect("Codex cached the list");
            let second = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            let id = second.session_id.to_string();
            let relisted = updated_models(&updates, &id, "mock-gamma").await;
            Ok((first, listed, chosen, turn, second, relisted))
        })
        .await
        .unwrap();
    let stderr = live.acplb.stderr();
    // The first session opened before Codex answered: the compiled-in list, then Codex's.
    assert!(
        values(&first, "model").iter().any(|m| m == "gpt-6.1-sol"),
        "{first:?}"
    );
    // The configured model (gpt-5.5, not listed) stays first and current; hidden beta is left out.
    assert_eq!(listed, ["gpt-5.5", "mock-alpha"], "{stderr}");
    assert_eq!(values(&chosen, "reasoning_effort"), ["default", "low", "medium"]);
    assert_end_turn(&turn.unwrap().stop_reason);
    let asked = live.mock.requests();
    assert_eq!(
        asked.last().unwrap().body["model"],
        "mock-alpha",
        "the chosen model runs"
    );
    // The second session opens with the list Codex gave last, then gets the changed one.
    assert_eq!(values(&second, "model"), ["gpt-5.5", "mock-alpha"], "{stderr}");
    assert_eq!(relisted, ["gpt-5.5", "mock-alpha", "mock-gamma"], "{stderr}");
    assert!(!stderr.contains("the model option offers"), "{stderr}");
}

/// The option `id` of the last `config_option_update` session `session` got.
fn last_option(updates: &Updates, session: &str, id: &str) -> Value {
    updates
        .all_with_sessions()
        .into_iter()
        .filter(|(s, u)| s == session && u["sessionUpdate"] == "config_option_update")
        .filter_map(|(_, u)| {
            u["configOptions"]
                .as_array()
                .and_then(|all| all.iter().find(|o| o["id"] == id).cloned())
        })
        .next_back()
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_air_client_that_asked_is_told_the_recommended_model_and_effort() {
    use agent_client_protocol::schema::ProtocolVersion;
    use agent_client_protocol::v1::schema::{ClientCapabilities, InitializeRequest};

    let mut live = Live::start();
    let template = template(&live);
    let catalog = live.env.root().join("catalog.json");
    write_catalog(
        &catalog,
        &[
            entry(&template, "mock-alpha", &["medium", "low"], false),
            entry(&template, "mock-gamma", &["high", "xhigh"], false),
        ],
    );
    use_catalog_url(&live.env.home(), &serve_catalog(catalog));
    let run = async |live: &mut Live, caps: ClientCapabilities| {
        let (ws, updates) = (live.workspace(), live.updates.clone());
        let seen = live
            .acplb
            .client(&updates, async |cx| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                    .block_task()
                    .await?;
                let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
                let id = s.session_id.to_string();
                updated_models(&updates, &id, "mock-gamma").await;
                let model = last_option(&updates, &id, "model");
                let chosen = cx
                    .send_request(SetSessionConfigOptionRequest::new(
                        s.session_id.clone(),
                        "model",
                        SessionConfigOptionValue::ValueId {
                            value: "mock-alpha".into(),
                        },
                    ))
                    .block_task()
                    .await?;
                let chosen = serde_json::to_value(chosen).unwrap();
                let effort = chosen["configOptions"]
                    .as_array()
                    .and_then(|all| all.iter().find(|o| o["id"] == "reasoning_effort").cloned())
                    .unwrap_or(Value::Null);
                Ok((model, effort))
            })
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
        live.respawn();
        seen
    };
    let recommended = |option: &Value| option["_meta"]["jetbrains"]["air"]["recommendedValue"].clone();
    let (model, effort) = run(&mut live, crate::air::air(&["recommendedValue"])).await;
    // Codex's default among what it lists (`isDefault`), not the configured model it lacks.
    let shown = recommended(&model);
    assert!(
        ["mock-alpha", "mock-gamma"].contains(&shown.as_str().unwrap_or_default()),
        "a listed model is recommended: {model}"
    );
    let offered = model["options"].as_array().unwrap();
    assert!(offered.iter().any(|o| o["value"] == shown), "{model}");
    assert_eq!(
        recommended(&effort),
        "medium",
        "mock-alpha's own default: {effort}"
    );
    let (model, effort) = run(&mut live, crate::air::air(&["diffPatch"])).await;
    assert!(
        recommended(&model).is_null() && recommended(&effort).is_null(),
        "{model} {effort}"
    );
    let (model, effort) = run(&mut live, ClientCapabilities::new()).await;
    assert!(
        model.get("_meta").is_none() && effort.get("_meta").is_none(),
        "{model} {effort}"
    );
}
