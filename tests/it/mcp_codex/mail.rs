//! With a composer that enables team mail, the same server serves the team-mail tools as the
//! resolved identity; its Codex threads run the composer's plugins (the audit plugin records
//! each call's prompt, the identity is claimed while a thread is open).

use std::time::Duration;

use acplb_atm::MailStore;
use acplb_playback::mock_model::MockConfig;
use serde_json::json;

use super::client::{Recorder, connect, is_error, start, text, thread_of, tool};
use crate::atm::{TEAM_PLUGINS, Team};
use crate::harness::eventually;

#[tokio::test]
async fn the_mail_tools_send_and_read_as_the_resolved_identity() {
    let team = Team::new(TEAM_PLUGINS);
    let lead = MailStore::new(team.home().join(".claude"), "team-lead", "demo").unwrap();
    lead.send("arch-ctm", "status report please", Some("status"))
        .unwrap();
    let composer = team.composer();
    let mut live = start(MockConfig::default(), &["--composer", &composer], &team.env());
    let mcp = connect(&mut live, Recorder::default()).await;
    let tools = mcp.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in ["atm_send", "atm_read", "atm_broadcast", "atm_pending_count"] {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name}: {names:?}"));
        assert!(tool.annotations.is_some(), "{name} has no annotations");
    }
    let count = tool(&mcp, "atm_pending_count", json!({})).await;
    assert!(text(&count).contains("\"unread\":1"), "{count:?}");
    let status = tool(&mcp, "codex_status", json!({}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(status["identity"], "arch-ctm", "{status}");
    assert_eq!(status["team"], "demo", "{status}");
    assert_eq!(status["pendingMail"], 1, "{status}");
    let sent = tool(&mcp, "atm_send", json!({"to": "bob", "message": "hi bob"})).await;
    assert!(!is_error(&sent), "{sent:?}");
    let bob = team.inbox("bob");
    assert_eq!(bob.len(), 1);
    assert_eq!(bob[0]["from"], "arch-ctm", "the sender is the resolved identity");
    let read = tool(&mcp, "atm_read", json!({})).await;
    assert!(text(&read).contains("status report please"), "{read:?}");
    assert!(
        eventually(Duration::from_secs(5), || team.inbox("arch-ctm")[0]["read"]
            == true)
        .await
    );
    // A Codex thread runs the composer's plugins: the identity is claimed, the prompt audited.
    let turn = tool(&mcp, "codex", json!({"prompt": "hello there"})).await;
    assert_eq!(text(&turn), "Hello from the mock model.", "{turn:?}");
    assert!(
        team.lock("arch-ctm").is_file(),
        "the thread's identity is claimed"
    );
    let thread = thread_of(&turn);
    let audit = team.audit();
    let prompt = audit
        .iter()
        .find(|l| l["event_type"] == "prompt")
        .unwrap_or_else(|| panic!("{audit:?}"));
    assert_eq!(prompt["session_id"], thread.as_str(), "{audit:?}");
    assert_eq!(prompt["prompt_summary"], "hello there");
    let threads = tool(&mcp, "codex_threads", json!({}))
        .await
        .structured_content
        .unwrap();
    let listed = &threads["threads"][0];
    assert_eq!(listed["threadId"], thread.as_str(), "{threads}");
    assert_eq!(listed["identity"], "arch-ctm", "{threads}");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn identity_flag_is_the_identity_of_the_threads_plugins_too() {
    // composer.toml says `arch-ctm`; `--identity` wins for the sessions' `atm-identity` too.
    let team = Team::new(TEAM_PLUGINS);
    let composer = team.composer();
    let mut live = start(
        MockConfig::default(),
        &["--composer", &composer, "--identity", "qa-bot"],
        &team.env(),
    );
    let mcp = connect(&mut live, Recorder::default()).await;
    let turn = tool(&mcp, "codex", json!({"prompt": "hello there"})).await;
    assert_eq!(
        text(&turn),
        "Hello from the mock model.",
        "{turn:?}\n{}",
        live.acplb.stderr()
    );
    assert!(team.lock("qa-bot").is_file(), "the thread claims `qa-bot`");
    assert!(
        !team.lock("arch-ctm").exists(),
        "composer.toml's identity is not claimed"
    );
    let body = live.mock.requests().last().unwrap().body.to_string();
    assert!(body.contains("Identity:  qa-bot"), "{body}");
    assert!(!body.contains("Identity:  arch-ctm"), "{body}");
    let thread = thread_of(&turn);
    let threads = tool(&mcp, "codex_threads", json!({}))
        .await
        .structured_content
        .unwrap();
    assert_eq!(threads["threads"][0]["threadId"], thread.as_str(), "{threads}");
    assert_eq!(threads["threads"][0]["identity"], "qa-bot", "{threads}");
    let sent = tool(&mcp, "atm_send", json!({"to": "bob", "message": "hi"})).await;
    assert!(!is_error(&sent), "{sent:?}");
    assert_eq!(team.inbox("bob")[0]["from"], "qa-bot");
    mcp.cancel().await.unwrap();
}
