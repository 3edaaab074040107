//! Codex's approval requests (app-server: a command asking to leave the sandbox) through MCP
//! elicitation: accepted, accepted for the session, declined; declined with the reason in the
//! result when the client cannot elicit. On exec Codex never asks: nothing is elicited.

use acplb_playback::mock_model::MockConfig;
use serde_json::json;

use super::client::{Elicit, Recorder, all_text, connect, is_error, start, text, tool};
use crate::harness::transport;

async fn escalate(elicit: Option<Elicit>) -> (String, Vec<String>) {
    let mut live = start(MockConfig::default(), &[], &[]);
    let recorder = Recorder {
        elicit,
        ..Recorder::default()
    };
    let mcp = connect(&mut live, recorder.clone()).await;
    let result = tool(&mcp, "codex", json!({"prompt": "scenario:escalate please", "sandbox": "read-only", "approval-policy": "on-request"})).await;
    assert!(!is_error(&result), "{result:?}");
    let asked = recorder.asked.lock().unwrap().clone();
    mcp.cancel().await.unwrap();
    (all_text(&result), asked)
}

#[tokio::test]
async fn an_approval_accepted_through_elicitation_runs_the_command() {
    for how in [Elicit::Accept, Elicit::AcceptForSession] {
        let (text, asked) = escalate(Some(how)).await;
        if transport() == "exec" {
            assert!(asked.is_empty(), "{asked:?}");
            continue;
        }
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].contains("echo escalated-ok"), "{asked:?}");
        assert!(
            text.starts_with("Escalation result:") && text.contains("escalated-ok"),
            "{how:?}: {text}"
        );
        assert!(!text.contains("declined"), "{text}");
    }
}

#[tokio::test]
async fn an_approval_declined_through_elicitation_does_not_run_it() {
    let (text, asked) = escalate(Some(Elicit::Decline)).await;
    if transport() == "exec" {
        assert!(asked.is_empty(), "{asked:?}");
        return;
    }
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        text.contains("declined `") && text.contains("the user said no"),
        "{text}"
    );
}

#[tokio::test]
async fn without_elicitation_an_approval_is_declined_and_the_result_says_why() {
    let (text, asked) = escalate(None).await;
    assert!(asked.is_empty());
    if transport() == "exec" {
        assert!(!text.contains("declined `"), "{text}");
        return;
    }
    assert!(
        text.contains("cannot be asked (no elicitation support)"),
        "{text}"
    );
    assert!(text.starts_with("Escalation result:"), "{text}");
}

#[tokio::test]
async fn approval_policy_never_declines_without_asking() {
    let mut live = start(MockConfig::default(), &[], &[]);
    let recorder = Recorder {
        elicit: Some(Elicit::Accept),
        ..Recorder::default()
    };
    let mcp = connect(&mut live, recorder.clone()).await;
    let result = tool(
        &mcp,
        "codex",
        json!({"prompt": "scenario:escalate please", "approval-policy": "never"}),
    )
    .await;
    assert!(recorder.asked.lock().unwrap().is_empty());
    if transport() != "exec" {
        assert!(
            all_text(&result).contains("the approval policy is `never`"),
            "{result:?}"
        );
    }
    assert!(text(&result).starts_with("Escalation result:"), "{result:?}");
    mcp.cancel().await.unwrap();
}
