//! `--role NAME`: a `[roles.<name>]` preset of acplb's config.toml reaches Codex (model and
//! developer instructions) through `acplb mcp codex` and through `acplb serve` alike.

use acplb_playback::mock_model::MockConfig;
use serde_json::json;

use super::client::{Recorder, connect, is_error, start, text, tool};
use crate::live::Live;

const CONFIG: &str = r#"
[roles.quick]
model = "mock-role-model"
effort = "low"
sandbox = "read-only"
approval_policy = "never"
developer_instructions = "ROLE-NOTE-7: answer briefly."

[roles.other]
model = "something-else"
"#;

/// A config folder (`XDG_CONFIG_HOME`) whose acplb/config.toml has the roles above.
pub fn config_home() -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("acplb")).unwrap();
    std::fs::write(dir.path().join("acplb/config.toml"), CONFIG).unwrap();
    let env = vec![("XDG_CONFIG_HOME".to_owned(), dir.path().display().to_string())];
    (dir, env)
}

fn last_request(live: &Live) -> String {
    live.mock.requests().last().unwrap().body.to_string()
}

#[tokio::test]
async fn a_role_sets_the_model_and_instructions_of_every_thread() {
    let (_dir, env) = config_home();
    let mut live = start(MockConfig::default(), &["--role", "quick"], &env);
    let mcp = connect(&mut live, Recorder::default()).await;
    let turn = tool(&mcp, "codex", json!({"prompt": "hello"})).await;
    assert_eq!(
        text(&turn),
        "Hello from the mock model.",
        "{turn:?}\n{}",
        live.acplb.stderr()
    );
    let body = last_request(&live);
    assert!(body.contains("\"model\":\"mock-role-model\""), "{body}");
    assert!(body.contains("ROLE-NOTE-7: answer briefly."), "{body}");
    // A call's own model wins over the role's; it must be one the model list offers.
    let own = tool(&mcp, "codex", json!({"prompt": "hello", "model": "gpt-5.5"})).await;
    assert!(last_request(&live).contains("\"model\":\"gpt-5.5\""), "{own:?}");
    let status = |mcp| async move {
        tool(mcp, "codex_status", json!({}))
            .await
            .structured_content
            .unwrap()
    };
    let open_before = status(&mcp).await["openThreads"].clone();
    let listed = |mcp| async move {
        tool(mcp, "codex_threads", json!({}))
            .await
            .structured_content
            .unwrap()["threads"]
            .clone()
    };
    let listed_before = listed(&mcp).await;
    let unknown = tool(
        &mcp,
        "codex",
        json!({"prompt": "hello", "model": "no-such-model"}),
    )
    .await;
    // The session made for the call is not left open.
    assert_eq!(status(&mcp).await["openThreads"], open_before);
    // Nor is it kept: the threads listed are the ones before (issue 19).
    let listed_after = listed(&mcp).await;
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["threadId"].to_string())
            .collect()
    };
    assert_eq!(ids(&listed_after), ids(&listed_before), "{listed_after}");
    assert_eq!(ids(&listed_before).len(), 2, "{listed_before}");
    assert!(is_error(&unknown));
    assert!(
        text(&unknown).contains("`no-such-model` is not a value of config option `model`"),
        "{unknown:?}"
    );
    let status = status(&mcp).await;
    assert_eq!(status["role"], "quick", "{status}");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn a_role_works_for_acplb_serve_too() {
    let (_dir, env) = config_home();
    let mut live = Live::start_with(MockConfig::default(), &["--role", "quick"], &env);
    let ws = live.workspace();
    live.acplb.hello(&ws).await.unwrap();
    let body = last_request(&live);
    assert!(body.contains("\"model\":\"mock-role-model\""), "{body}");
    assert!(body.contains("ROLE-NOTE-7: answer briefly."), "{body}");
}
