//! A `codex` call's own instructions and config reach Codex itself (issue 19, FR-2): its
//! developer instructions are the model's developer message with the plugins' context after
//! them, its base instructions replace the model's, and a config override takes effect.

use acplb_playback::mock_model::MockConfig;
use serde_json::{Value, json};

use super::client::{Recorder, connect, is_error, start, text, tool};
use crate::atm::{TEAM_PLUGINS, Team};
use crate::live::Live;

fn last_request(live: &Live) -> Value {
    live.mock.requests().last().unwrap().body.clone()
}

/// The text of each developer message of the request, in order.
fn developer_messages(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == "developer")
        .map(|item| {
            item["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn a_calls_instructions_and_config_reach_codex_with_the_plugins_context() {
    let team = Team::new(TEAM_PLUGINS);
    let composer = team.composer();
    let mut live = start(MockConfig::default(), &["--composer", &composer], &team.env());
    let mcp = connect(&mut live, Recorder::default()).await;

    // Without the call's own: Codex's model instructions, the plan tool on.
    let plain = tool(&mcp, "codex", json!({"prompt": "hello"})).await;
    assert_eq!(text(&plain), "Hello from the mock model.", "{plain:?}");
    let body = last_request(&live);
    let codex_base = developer_messages(&body)[0].clone();
    assert!(
        codex_base.len() > 200,
        "Codex's own base instructions: {codex_base}"
    );
    assert!(tool_names(&body).contains(&"update_plan".to_owned()), "{body}");

    let turn = tool(
        &mcp,
        "codex",
        json!({
            "prompt": "hello",
            "developer-instructions": "CALLER-DEV-5: write tests first.",
            "base-instructions": "CALLER-BASE-9: you are a careful tester.",
            "include-plan-tool": false,
            "compact-prompt": "Summarise tersely.",
        }),
    )
    .await;
    assert_eq!(
        text(&turn),
        "Hello from the mock model.",
        "{turn:?}\n{}",
        live.acplb.stderr()
    );
    let body = last_request(&live);
    // Base instructions replace the model's (Codex 0.169 sends them as the first developer
    // message).
    let developer = developer_messages(&body);
    assert_eq!(
        developer[0].trim(),
        "CALLER-BASE-9: you are a careful tester.",
        "{developer:#?}"
    );
    assert!(
        !developer.iter().any(|d| d.contains(&codex_base)),
        "{developer:#?}"
    );
    // The caller's developer instructions reach the model, and the identity plugin's context
    // comes after them, not instead of them (in the same developer message on `exec`, in the
    // turn's own on the app-server).
    let position = |needle: &str| {
        developer
            .iter()
            .enumerate()
            .find_map(|(i, d)| d.find(needle).map(|at| (i, at)))
            .unwrap_or_else(|| panic!("no `{needle}` in {developer:#?}"))
    };
    assert!(
        position("CALLER-DEV-5: write tests first.") < position("Identity:  arch-ctm"),
        "{developer:#?}"
    );
    // A config override: the plan tool is off for this thread only.
    assert!(!tool_names(&body).contains(&"update_plan".to_owned()), "{body}");

    // `profile` selects a Codex profile (`<codex home>/loud.config.toml`); `config` sets a key directly.
    std::fs::write(
        live.env.home().join("loud.config.toml"),
        "model_verbosity = \"high\"\n",
    )
    .unwrap();
    let verbosity = |body: Value| body["text"]["verbosity"].clone();
    assert_eq!(verbosity(body), "low", "Codex's default for the mock's model");
    let loud = tool(&mcp, "codex", json!({"prompt": "hello", "profile": "loud"})).await;
    assert!(!is_error(&loud), "{loud:?}");
    assert_eq!(verbosity(last_request(&live)), "high");
    let medium = tool(
        &mcp,
        "codex",
        json!({"prompt": "hello", "config": {"model_verbosity": "medium"}}),
    )
    .await;
    assert!(!is_error(&medium), "{medium:?}");
    assert_eq!(verbosity(last_request(&live)), "medium");

    // A key that could carry a secret is refused, naming it.
    let secret = tool(
        &mcp,
        "codex",
        json!({"prompt": "hello", "config": {"model_providers.x.http_headers": {"A": "b"}}}),
    )
    .await;
    assert!(is_error(&secret));
    assert!(
        text(&secret).contains("`model_providers.x.http_headers` may hold a secret"),
        "{secret:?}"
    );
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn a_threads_model_profile_and_config_hold_when_another_process_continues_it() {
    let mut live = start(MockConfig::default(), &[], &[]);
    std::fs::write(
        live.env.home().join("loud.config.toml"),
        "model_verbosity = \"high\"\n",
    )
    .unwrap();
    let mcp = connect(&mut live, Recorder::default()).await;
    let args = json!({"prompt": "hello", "model": "gpt-5.5", "profile": "loud", "include-plan-tool": false});
    let first = tool(&mcp, "codex", args).await;
    assert!(!is_error(&first), "{first:?}");
    let thread = first.structured_content.as_ref().unwrap()["threadId"]
        .as_str()
        .unwrap()
        .to_owned();
    let seen = |body: &Value| {
        (
            body["model"].clone(),
            body["text"]["verbosity"].clone(),
            tool_names(body).contains(&"update_plan".to_owned()),
        )
    };
    let asked = (json!("gpt-5.5"), json!("high"), false);
    assert_eq!(seen(&last_request(&live)), asked);
    mcp.cancel().await.unwrap();
    live.acplb.wait_exit(std::time::Duration::from_secs(20)).await;

    // Another server process continues the thread: what the first caller asked still holds.
    live.respawn();
    let mcp = connect(&mut live, Recorder::default()).await;
    let reply = tool(
        &mcp,
        "codex-reply",
        json!({"prompt": "hello", "threadId": thread}),
    )
    .await;
    assert!(!is_error(&reply), "{reply:?}\n{}", live.acplb.stderr());
    assert_eq!(seen(&last_request(&live)), asked, "{}", live.acplb.stderr());
    mcp.cancel().await.unwrap();
}
