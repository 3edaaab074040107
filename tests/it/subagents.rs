//! Codex's subagents, end to end with the real Codex (multi-agent v2 turned on) and the mock
//! model: on app-server a spawned subagent is one tool call titled by its task, with what it
//! said and ran as content and its end as status; its approvals reach the editor; a cancel
//! stops it with its parent. On exec the calls that spawn and wait show, with a notice that
//! exec does not show the subagents' own work.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, StopReason};
use serde_json::Value;

use crate::harness::{
    Updates, codex_work_left, eventually, open_session, processes_with_env, prompt, transport,
};
use crate::live::{Live, set_mode};

/// Codex with its multi-agent tools (`features.multi_agent_v2`, off by default in 0.169.0).
pub fn live() -> Live {
    Live::start_with(
        MockConfig::default(),
        &["-c", "features.multi_agent_v2=true"],
        &[],
    )
}

pub fn on_exec() -> bool {
    transport() == "exec"
}

/// The subagent tool call titled `title` and the last update of it (status, content).
pub fn subagent(updates: &Updates, title: &str) -> (Value, Value) {
    let call = updates
        .of_kind("tool_call")
        .into_iter()
        .find(|c| c["title"] == title)
        .unwrap_or_else(|| panic!("no tool call `{title}`: {:?}", updates.of_kind("tool_call")));
    let last = updates
        .of_kind("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == call["toolCallId"] && u.get("status").is_some())
        .unwrap_or_else(|| panic!("`{title}` never updated"));
    (call, last)
}

/// The text content of a tool call update.
pub fn text(update: &Value) -> String {
    update["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Whether any update says exec does not show the subagents' work.
pub fn exec_notice_shown(updates: &Updates) -> bool {
    updates
        .json()
        .iter()
        .any(|u| u.to_string().contains("On the exec transport acplb sees only"))
}

/// `text` prompted in a new session (in `mode` when given); the prompt's stop reason.
pub async fn one_prompt(live: &mut Live, mode: Option<&str>, text: &str) -> StopReason {
    let ws = live.workspace();
    let updates = live.updates.clone();
    live.acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            if let Some(mode) = mode {
                set_mode(&cx, &s.session_id, mode).await?;
            }
            Ok(prompt(&cx, &s.session_id, text).await?.stop_reason)
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_shows_as_a_tool_call_with_its_task_work_and_result() {
    let mut live = live();
    let stop = one_prompt(&mut live, None, "scenario:subagent ask a helper").await;
    assert_eq!(stop, StopReason::EndTurn);
    assert!(live.updates.agent_text().contains("The helper has finished."));
    let child_asked = live
        .mock
        .requests()
        .iter()
        .any(|r| r.scenario.as_deref() == Some("subagent_child"));
    assert!(child_asked, "the subagent ran its own task");
    if on_exec() {
        let (call, last) = subagent(&live.updates, "Waiting for subagents");
        assert_eq!(call["kind"], "think");
        assert_eq!(call["name"], "wait_agent", "{call}");
        assert_eq!(last["status"], "completed");
        assert!(exec_notice_shown(&live.updates), "{:?}", live.updates.json());
        return;
    }
    let (call, last) = subagent(&live.updates, "Subagent: lister");
    assert_eq!(call["kind"], "think");
    // The subagent's call is named by the tool that started it (the calls of the
    // collaboration tools themselves fold into it).
    assert_eq!(call["name"], "spawn_agent", "{call}");
    assert_eq!(crate::tool_names::names(&live.updates), ["spawn_agent"]);
    assert_eq!(call["status"], "in_progress");
    assert_eq!(last["status"], "completed", "{last}");
    let content = text(&last);
    assert!(content.contains("- Listing the workspace."), "{content}");
    assert!(content.contains("- ran `sleep 0.5; ls`"), "{content}");
    assert!(
        content.contains("- The workspace holds README.md and more."),
        "{content}"
    );
    assert_eq!(
        last["rawOutput"]["result"],
        "The workspace holds README.md and more."
    );
    // The subagent's words are in its tool call, not in the parent's message.
    assert!(!live.updates.agent_text().contains("Listing the workspace"));
    assert!(!exec_notice_shown(&live.updates));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_running_subagent_stops_everything_within_a_second() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let sleeping = {
        let marker = marker.clone();
        move || {
            processes_with_env(&marker).into_iter().any(|p| {
                let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                String::from_utf8_lossy(&cmdline).contains("sleep 30")
            })
        }
    };
    let (stop, took, left) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec!["scenario:subagent_slow nap".into()]);
            let turn = cx.send_request(request).block_task();
            let canceller = async {
                assert!(
                    eventually(Duration::from_secs(60), sleeping).await,
                    "the subagent's sleep 30 never started"
                );
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))
                    .unwrap();
                at
            };
            let (resp, at) = tokio::join!(turn, canceller);
            let took = at.elapsed();
            let left = codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            Ok((resp?.stop_reason, took, left))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    assert!(left.is_empty(), "codex work left after the cancel: {left:?}");
    if !on_exec() {
        let (_, last) = subagent(&live.updates, "Subagent: sleeper");
        assert_eq!(last["status"], "failed", "{last}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_approval_reaches_the_editor_as_the_sessions_own() {
    if on_exec() {
        // exec never asks (approval policy `never`); the hostile exec test covers its refusal.
        return;
    }
    let mut live = live();
    let stop = one_prompt(&mut live, Some("read-only"), "scenario:subagent_escalate go").await;
    assert_eq!(stop, StopReason::EndTurn);
    let seen = live.acplb.permissions.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        seen[0]["toolCall"]["title"], "Subagent escalator: echo escalated-ok",
        "the prompt says which subagent asks: {}",
        seen[0]
    );
    let (_, last) = subagent(&live.updates, "Subagent: escalator");
    assert_eq!(last["status"], "completed", "{last}");
    let content = text(&last);
    assert!(content.contains("ran `echo escalated-ok`"), "{content}");
    assert!(content.contains("Escalation result:"), "{content}");
    // The asked-about command's own tool call ended too.
    let asked = seen[0]["toolCall"]["toolCallId"].clone();
    let ended = live
        .updates
        .of_kind("tool_call_update")
        .into_iter()
        .any(|u| u["toolCallId"] == asked && u["status"] == "completed");
    assert!(ended, "the approved command's call ended");
}
