//! What only the app-server transport does, end to end with the real Codex: live text and
//! command output, permission prompts (accept, decline, allow for the session, a patch whose
//! request shows the diff, an editor that errors or never answers), steering, one server
//! shared by concurrent sessions, and a server killed mid-turn.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use acplb_playback::mock_model::Script;
use agent_client_protocol::v1::schema::{
    CancelNotification, PermissionOptionKind, PromptRequest, SetSessionConfigOptionRequest, StopReason,
};
use serde_json::Value;

use crate::harness::{Answer, eventually, open_session, prompt};
use crate::live::{Live, set_mode};

const SCENARIOS: &str = r#"
[scenarios.as_twice]
[[scenarios.as_twice.steps]]
actions = [{ type = "exec", cmd = "echo twice-ok", sandbox_permissions = "require_escalated", justification = "Run echo outside the sandbox?" }]
[[scenarios.as_twice.steps]]
actions = [{ type = "exec", cmd = "echo twice-ok", sandbox_permissions = "require_escalated", justification = "Run echo outside the sandbox?" }]
[[scenarios.as_twice.steps]]
actions = [{ type = "message", text = "Both ran: {last_output}" }]

[scenarios.as_a]
[[scenarios.as_a.steps]]
actions = [{ type = "message", text = "reply for session A" }]
[scenarios.as_b]
[[scenarios.as_b.steps]]
actions = [{ type = "message", text = "reply for session B" }]
[scenarios.as_c]
[[scenarios.as_c.steps]]
actions = [{ type = "message", text = "reply for session C" }]

[scenarios.as_steer]
[[scenarios.as_steer.steps]]
actions = [{ type = "exec", cmd = "sleep 2", yield_time_ms = 10000 }]
[[scenarios.as_steer.steps]]
actions = [{ type = "message", text = "the first prompt's answer" }]

[scenarios.as_steered]
[[scenarios.as_steered.steps]]
actions = [{ type = "message", text = "steered in: turns={turns}" }]
"#;

pub(crate) fn live() -> Live {
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "appserver-test").unwrap());
    Live::start_with(
        MockConfig::default().with_script(script),
        &["--transport", "app-server"],
        &[],
    )
}

/// The text of every `tool_call_update` content, concatenated, per update.
fn tool_texts(updates: &[Value]) -> Vec<(String, String)> {
    updates
        .iter()
        .filter(|u| {
            matches!(
                u["sessionUpdate"].as_str(),
                Some("tool_call" | "tool_call_update")
            )
        })
        .map(|u| {
            let text = u["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["content"]["text"].as_str())
                .collect::<String>();
            (u["status"].as_str().unwrap_or_default().to_owned(), text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answer_arrives_in_several_chunks_and_nothing_twice() {
    let mut live = live();
    let stop = live
        .one_text_turn("read-only", "scenario:plain hi")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let chunks = live.updates.of_kind("agent_message_chunk");
    assert!(chunks.len() > 1, "one chunk per delta, got {chunks:?}");
    assert_eq!(
        live.updates.agent_text(),
        "Hello! I am the mock model. 2 + 2 = 4."
    );
    assert!(
        !live.updates.of_kind("agent_thought_chunk").is_empty(),
        "reasoning streams too"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_output_arrives_before_the_command_ends() {
    let mut live = live();
    let stop = live
        .one_text_turn("full-access", "scenario:stream_shell go")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let texts = tool_texts(&live.updates.json());
    let early = texts.iter().position(|(status, text)| {
        text.contains("first line") && !text.contains("second line") && status != "completed"
    });
    let done = texts.iter().position(|(status, _)| status == "completed");
    assert!(live.acplb.permissions.seen().is_empty(), "full-access never asks");
    assert!(
        early.is_some(),
        "the first line showed while the command ran: {texts:?}"
    );
    assert!(early < done, "before the command completed: {texts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_command_runs_and_the_request_shows_it() {
    let mut live = live();
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::AllowOnce));
    let stop = live
        .one_text_turn("read-only", "scenario:escalate please")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let asked = live.acplb.permissions.seen();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]["toolCall"].to_string().contains("echo escalated-ok"),
        "{}",
        asked[0]
    );
    let kinds: Vec<&str> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    assert!(
        kinds.contains(&"allow_once") && kinds.contains(&"reject_once"),
        "{kinds:?}"
    );
    let text = live.updates.agent_text();
    assert!(
        text.starts_with("Escalation result:") && text.contains("escalated-ok"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_command_does_not_run() {
    let mut live = live();
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::RejectOnce));
    let stop = live
        .one_text_turn("read-only", "scenario:escalate please")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert_eq!(live.acplb.permissions.seen().len(), 1);
    let text = live.updates.agent_text();
    assert!(
        text.starts_with("Escalation result:") && !text.contains("escalated-ok"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_that_answers_with_an_error_is_a_rejection() {
    let mut live = live();
    live.acplb.permissions.answer(Answer::Error);
    let stop = live
        .one_text_turn("read-only", "scenario:escalate please")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let text = live.updates.agent_text();
    assert!(
        text.starts_with("Escalation result:") && !text.contains("escalated-ok"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_for_the_session_is_not_asked_again() {
    let mut live = live();
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::AllowAlways));
    let stop = live
        .one_text_turn("read-only", "scenario:as_twice go")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert_eq!(
        live.acplb.permissions.seen().len(),
        1,
        "the second run was already allowed"
    );
    let text = live.updates.agent_text();
    assert!(
        text.starts_with("Both ran:") && text.contains("twice-ok"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_in_read_only_asks_with_the_diff_and_applies_when_allowed() {
    let mut live = live();
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::AllowOnce));
    let stop = live
        .one_text_turn("read-only", "scenario:patch edit")
        .await
        .unwrap();
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    let asked = live.acplb.permissions.seen();
    assert!(
        !asked.is_empty(),
        "a patch outside the read-only sandbox is asked for"
    );
    let diffs: Vec<&Value> = asked[0]["toolCall"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["type"] == "diff")
        .collect();
    let added = diffs
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|p| p.ends_with("hello.txt")))
        .unwrap_or_else(|| panic!("the request carries the diff of hello.txt: {}", asked[0]));
    assert!(
        added["newText"]
            .as_str()
            .unwrap()
            .contains("Hello from the mock model."),
        "{added}"
    );
    assert!(added["oldText"].is_null(), "a new file has no old text: {added}");
    let written = std::fs::read_to_string(live.workspace().join("hello.txt")).unwrap();
    assert!(written.contains("Hello from the mock model."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_while_a_permission_is_pending_ends_the_turn_at_once() {
    let mut live = live();
    live.acplb.permissions.answer(Answer::Never);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let permissions = live.acplb.permissions.clone();
    let (stop, took) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let request = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:escalate please".into()],
            ));
            assert!(
                eventually(Duration::from_secs(60), || !permissions.seen().is_empty()).await,
                "asked"
            );
            let at = Instant::now();
            cx.send_notification(CancelNotification::new(s.session_id.clone()))?;
            let stop = request.block_task().await?;
            Ok((stop.stop_reason, at.elapsed()))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(
        took < Duration::from_secs(1),
        "cancelled within 1 s, took {took:?}"
    );
    let ran = tool_texts(&live.updates.json())
        .iter()
        .any(|(_, t)| t.contains("escalated-ok"));
    assert!(!ran, "the command never ran");
    let left: Vec<String> = live
        .codex_left()
        .into_iter()
        .filter(|p| p.contains("escalated-ok"))
        .collect();
    assert!(left.is_empty(), "no process left: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_sessions_at_once_on_one_server_each_get_their_own_answer() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let sessions = live
        .acplb
        .client(&updates, async |cx| {
            let (_, a) = open_session(&cx, &ws).await?;
            let b = cx
                .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(&ws))
                .block_task()
                .await?;
            let c = cx
                .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(&ws))
                .block_task()
                .await?;
            let (ra, rb, rc) = tokio::join!(
                prompt(&cx, &a.session_id, "scenario:as_a"),
                prompt(&cx, &b.session_id, "scenario:as_b"),
                prompt(&cx, &c.session_id, "scenario:as_c"),
            );
            for r in [ra, rb, rc] {
                assert_eq!(r?.stop_reason, StopReason::EndTurn);
            }
            Ok([a.session_id, b.session_id, c.session_id])
        })
        .await
        .unwrap();
    let all = live.updates.all_with_sessions();
    for (session, letter) in sessions.iter().zip(["A", "B", "C"]) {
        let text: String = all
            .iter()
            .filter(|(s, u)| s == &session.to_string() && u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|(_, u)| u["content"]["text"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(text, format!("reply for session {letter}"));
    }
    let servers: Vec<String> = live
        .codex_left()
        .into_iter()
        // Codex's server, not acplb (whose own command line names the transport).
        .filter(|p| p.contains("codex app-server"))
        .collect();
    assert!(servers.len() <= 1, "one app-server for all sessions: {servers:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_sent_while_busy_steers_the_running_turn() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (first, second) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            cx.send_request(SetSessionConfigOptionRequest::new(
                s.session_id.clone(),
                "while_busy",
                "steer",
            ))
            .block_task()
            .await?;
            let first = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:as_steer go".into()],
            ));
            assert!(
                eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await,
                "the first turn runs its command"
            );
            let second = prompt(&cx, &s.session_id, "scenario:as_steered STEER-TOKEN").await?;
            Ok((first.block_task().await?, second))
        })
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::EndTurn);
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert!(
        live.updates.agent_text().contains("steered in"),
        "{}",
        live.updates.agent_text()
    );
    let prompts = live
        .mock
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("STEER-TOKEN"))
        .count();
    assert!(prompts >= 1, "the steered text reached the model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_app_server_fails_the_turn_clearly_and_the_next_prompt_resumes() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let marker = live.codex_marker();
    let (failed, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            assert_eq!(
                prompt(&cx, &s.session_id, "scenario:plain first")
                    .await?
                    .stop_reason,
                StopReason::EndTurn
            );
            let turn = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:sleep".into()],
            ));
            assert!(eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await);
            // Codex's own process: `codex app-server` (acplb's command line names it too).
            let server = crate::harness::processes_with_env(&marker)
                .into_iter()
                .find(|pid| {
                    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                        let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
                        args.get(1) == Some(&b"app-server".as_slice())
                    })
                })
                .expect("the app-server runs");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(server as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            let failed = turn.block_task().await;
            let next = prompt(&cx, &s.session_id, "scenario:history again").await?;
            Ok((failed, next))
        })
        .await
        .unwrap();
    let error = failed.expect_err("the turn fails");
    assert!(
        error.message.contains("exited before the turn finished"),
        "{}",
        error.message
    );
    assert!(error.message.contains("signal: 9"), "{}", error.message);
    assert_eq!(next.stop_reason, StopReason::EndTurn);
    assert!(
        live.updates.agent_text().contains("history seen=true"),
        "the resumed thread remembers: {}",
        live.updates.agent_text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_are_offered_and_status_is_answered_by_acplb() {
    let mut live = live();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (first, status) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let first = prompt(&cx, &s.session_id, "scenario:plain hi").await?;
            let status = prompt(&cx, &s.session_id, "/status").await?;
            Ok((first, status))
        })
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::EndTurn);
    assert_eq!(status.stop_reason, StopReason::EndTurn);
    let commands = live.updates.of_kind("available_commands_update");
    let names: Vec<&str> = commands[0]["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "review",
            "compact",
            "init",
            "status",
            "mcp",
            "terminals",
            "goal",
            "hooks",
            "rename"
        ]
    );
    let text = live.updates.agent_text();
    assert!(
        text.contains("**Status**") && text.contains("- Mode: read-only"),
        "{text}"
    );
    assert!(text.contains("tokens ("), "context used after one turn: {text}");
    assert_eq!(live.mock.requests().len(), 1, "/status never reached the model");
}
