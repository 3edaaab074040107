//! Sessions that outlast acplb, end to end with the real Codex on both transports: a session
//! loaded in a new acplb replays exactly what the editor saw and goes on with the same Codex
//! thread; the same after acplb was killed mid-turn; resume, close, a thread Codex no longer
//! has, and the hostile cases (unknown, malformed, damaged, open in another acplb).

use std::time::Duration;

use agent_client_protocol::Agent;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, InitializeRequest, LoadSessionRequest, PromptRequest, ResumeSessionRequest,
    SessionId, StopReason,
};
use serde_json::Value;

use crate::harness::{eventually, open_session, prompt};
use crate::live::{Live, set_mode};

/// `initialize`, checking that sessions are offered as durable.
pub(crate) async fn initialize(cx: &ConnectionTo<Agent>) -> Result<(), agent_client_protocol::Error> {
    let init = cx
        .send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await?;
    let caps = serde_json::to_value(&init.agent_capabilities).unwrap();
    assert_eq!(caps["loadSession"], true, "{caps}");
    for cap in ["list", "resume", "close"] {
        assert!(caps["sessionCapabilities"][cap].is_object(), "{cap}: {caps}");
    }
    Ok(())
}

/// Opens a session, sends `text` as its one prompt, hangs up and waits for acplb to exit; the
/// session's id.
pub(crate) async fn one_turn_then_exit(live: &mut Live, text: &str) -> SessionId {
    let ws = live.workspace();
    let updates = live.updates.clone();
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, text).await?;
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    id
}

/// Updates as JSON, without the ones acplb sends anew to every opened session.
fn shown(updates: &[Value]) -> Vec<Value> {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] != "available_commands_update")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loaded_session_replays_what_the_editor_saw_and_the_conversation_goes_on() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let prompts = [
        "scenario:plain hello",
        "scenario:shell list",
        "scenario:patch write",
        "scenario:plan think",
        "scenario:fail try",
    ];
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "auto").await?;
            for text in prompts {
                let r = prompt(&cx, &s.session_id, text).await?;
                assert_eq!(r.stop_reason, StopReason::EndTurn, "{text}");
            }
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    let seen_live = shown(&live.updates.json());
    for kind in ["tool_call", "plan", "current_mode_update"] {
        assert!(
            seen_live.iter().any(|u| u["sessionUpdate"] == kind),
            "{kind} was shown live"
        );
    }
    assert!(
        seen_live
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed"),
        "the failing command was shown failed"
    );

    live.respawn();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (replayed, load, recall) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let load = cx
                .send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            // Everything replayed came before the answer.
            let replayed = watch.json();
            let recall = prompt(&cx, &id, "scenario:history again").await?;
            Ok((replayed, load, recall))
        })
        .await
        .unwrap();
    let users: Vec<&str> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(users, prompts, "each prompt replays as sent");
    let rest: Vec<Value> = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] != "user_message_chunk")
        .cloned()
        .collect();
    assert_eq!(shown(&rest), seen_live, "the replay is what the editor saw live");
    // The user's prompt comes before what answered it.
    let first = |kind: &str| replayed.iter().position(|u| u["sessionUpdate"] == kind).unwrap();
    assert!(first("user_message_chunk") < first("agent_message_chunk"));
    let load = serde_json::to_value(&load).unwrap();
    assert_eq!(
        load["modes"]["currentModeId"], "auto",
        "the mode is restored: {load}"
    );
    assert_eq!(recall.stop_reason, StopReason::EndTurn);
    assert!(
        live.updates.agent_text().contains("history seen=true"),
        "the conversation goes on in the same Codex thread: {}",
        live.updates.agent_text()
    );
    let threads = live.thread_ids();
    assert_eq!(threads.first(), threads.last(), "one Codex thread: {threads:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_acplb_was_killed_mid_turn_the_turn_shows_as_interrupted_and_the_session_goes_on() {
    let mut live = Live::start();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let pid = live.acplb.pid;
    let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = kept.clone();
    // The connection breaks with acplb; what matters is what the next acplb finds.
    let _broken = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            *keep.lock().unwrap() = Some(s.session_id.clone());
            set_mode(&cx, &s.session_id, "full-access").await?;
            prompt(&cx, &s.session_id, "scenario:plain first").await?;
            let _turn = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:sleep".into()],
            ));
            assert!(eventually(Duration::from_secs(60), || !watch.of_kind("tool_call").is_empty()).await);
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            Ok(())
        })
        .await;
    let id: SessionId = kept.lock().unwrap().clone().expect("the session opened");
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    let call = live.updates.of_kind("tool_call")[0]["toolCallId"].clone();

    live.respawn();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (replayed, recall) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            let replayed = watch.json();
            let recall = prompt(&cx, &id, "scenario:history again").await?;
            Ok((replayed, recall))
        })
        .await
        .unwrap();
    let failed = replayed
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call)
        .unwrap_or_else(|| panic!("the open tool call is closed: {replayed:#?}"));
    assert_eq!(failed["status"], "failed");
    let text: String = replayed
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(text.contains("This turn was interrupted"), "{text}");
    assert_eq!(recall.stop_reason, StopReason::EndTurn);
    assert!(
        live.updates.agent_text().contains("history seen=true"),
        "the Codex thread goes on: {}",
        live.updates.agent_text()
    );
    // A second load shows the same, and the turn is not closed twice.
    let journal = std::fs::read_to_string(
        live.state_dir()
            .join("sessions")
            .join(id.to_string())
            .join("journal.jsonl"),
    )
    .unwrap();
    assert_eq!(journal.matches("\"stop\":\"interrupted\"").count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_goes_on_without_replay_and_close_ends_the_session_but_keeps_it() {
    let mut live = Live::start();
    let ws = live.workspace();
    let id = one_turn_then_exit(&mut live, "scenario:plain first").await;

    live.respawn();
    let (marker, pid) = (live.codex_marker(), live.acplb.pid);
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let (before, closed_prompt, reloaded) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            cx.send_request(ResumeSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            let before = watch.json();
            let r = prompt(&cx, &id, "scenario:history again").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            cx.send_request(CloseSessionRequest::new(id.clone()))
                .block_task()
                .await?;
            let left = crate::harness::codex_work_left(&marker, pid, Duration::from_secs(5)).await;
            assert!(
                left.is_empty(),
                "closing stopped the session's Codex work: {left:?}"
            );
            let closed_prompt = prompt(&cx, &id, "scenario:plain after close").await;
            // Closed, not gone: it loads again in the same acplb.
            watch.clear();
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            Ok((before, closed_prompt, watch.json()))
        })
        .await
        .unwrap();
    assert!(
        before
            .iter()
            .all(|u| u["sessionUpdate"] == "available_commands_update"),
        "resume replays nothing: {before:#?}"
    );
    assert!(
        live.updates.agent_text().contains("history seen=true")
            || reloaded.iter().any(|u| {
                u["content"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("history seen=true"))
            })
    );
    let e = closed_prompt.expect_err("a closed session takes no prompt");
    assert!(
        e.message.contains(&format!("unknown session `{id}`")),
        "{}",
        e.message
    );
    let users = reloaded
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .count();
    assert_eq!(users, 2, "both turns are kept: {reloaded:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_codex_thread_is_gone_goes_on_from_a_digest() {
    let mut live = Live::start();
    let ws = live.workspace();
    let id = one_turn_then_exit(&mut live, "scenario:plain remember the word pelican").await;
    // Codex's record of its threads, gone (another CODEX_HOME would look the same).
    std::fs::remove_dir_all(live.env.home().join("sessions")).unwrap();

    live.respawn();
    let updates = live.updates.clone();
    let r = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            prompt(&cx, &id, "scenario:plain and now?").await
        })
        .await
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let text = live.updates.agent_text();
    assert!(
        text.contains("it continues in a new thread"),
        "a notice says so: {text}"
    );
    let last = live.mock.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("continues an earlier conversation") && last.contains("remember the word pelican"),
        "the new thread starts from the digest: {last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loading_what_cannot_be_loaded_says_why() {
    let mut live = Live::start();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let errors = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let load = |id: &str| {
                cx.send_request(LoadSessionRequest::new(SessionId::new(id.to_owned()), &ws))
                    .block_task()
            };
            let mut errors = Vec::new();
            errors.push(
                load("0b6a3f0e-0000-4000-8000-000000000000")
                    .await
                    .unwrap_err()
                    .message,
            );
            errors.push(load("../../etc").await.unwrap_err().message);
            let damaged = state.join("sessions/damaged-1");
            std::fs::create_dir_all(&damaged).unwrap();
            std::fs::write(damaged.join("journal.jsonl"), "not a journal\n").unwrap();
            errors.push(load("damaged-1").await.unwrap_err().message);
            // The session that is open still works.
            let r = prompt(&cx, &s.session_id, "scenario:plain still here").await?;
            assert_eq!(r.stop_reason, StopReason::EndTurn);
            Ok(errors)
        })
        .await
        .unwrap();
    assert!(
        errors[0].contains("acplb keeps no session of that id"),
        "{}",
        errors[0]
    );
    assert!(
        errors[1].contains("is not a session id acplb hands out"),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].contains("is not an acplb session journal"),
        "{}",
        errors[2]
    );
}

pub(crate) const SUMMARY_SCENARIOS: &str = r#"
[scenarios.summ]
[[scenarios.summ.steps]]
actions = [{ type = "message", text = "Summary: we said hello and nothing is left." }]

[scenarios.summ_hang]
[[scenarios.summ_hang.steps]]
delay_ms = 60000
actions = [{ type = "message", text = "never said in time" }]
"#;

/// A live acplb whose sessions ask for a summary with `question` when acplb stops.
fn with_summaries(question: &str) -> (Live, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let composer = dir.path().join("composer.toml");
    std::fs::write(
        &composer,
        format!("[[plugin]]\nid = \"session-summary\"\nprompt = \"{question}\"\n"),
    )
    .unwrap();
    use acplb_playback::mock_model::{MockConfig, Script};
    let script =
        Script::builtin().layered_with(Script::from_toml_str(SUMMARY_SCENARIOS, "summaries").unwrap());
    let config = MockConfig::default().with_script(script);
    let composer = composer.display().to_string();
    let live = Live::start_with(config, &["--composer", &composer], &[]);
    (live, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_shutdown_each_session_keeps_a_summary() {
    use std::os::unix::fs::PermissionsExt as _;
    let (mut live, _dir) = with_summaries("scenario:summ Summarise, please.");
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (id, idle) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            // A session without a turn has nothing to summarise.
            let (_, idle) = open_session(&cx, &ws).await?;
            Ok((s.session_id, idle.session_id))
        })
        .await
        .unwrap();
    let (code, took) = live.acplb.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(code, Some(0));
    assert!(took < Duration::from_secs(10), "{took:?}");
    let sessions = live.state_dir().join("sessions");
    let path = sessions.join(id.to_string()).join("summary.md");
    let summary = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}: {}", live.acplb.stderr()));
    assert_eq!(summary, "Summary: we said hello and nothing is left.\n");
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(!sessions.join(idle.to_string()).join("summary.md").exists());
    // The summary turn is not part of what the editor saw, nor of the journal.
    let journal = std::fs::read_to_string(sessions.join(id.to_string()).join("journal.jsonl")).unwrap();
    assert!(!journal.contains("nothing is left"), "{journal}");
    assert_eq!(sessions_cli(&live, &["summary", &id.to_string()]), summary);
    let json: Value = serde_json::from_str(&sessions_cli(&live, &["list", "--json"])).unwrap();
    let entry = json
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sessionId"] == id.to_string())
        .unwrap()
        .clone();
    assert_eq!(entry["status"], "idle", "{entry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_that_does_not_come_is_given_up_at_the_limit() {
    let (mut live, _dir) = with_summaries("scenario:summ_hang Summarise, please.");
    let ws = live.workspace();
    let updates = live.updates.clone();
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            Ok(s.session_id)
        })
        .await
        .unwrap();
    let (code, took) = live.acplb.wait_exit(Duration::from_secs(20)).await;
    assert_eq!(code, Some(0));
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(14),
        "{took:?}"
    );
    let summary = live
        .state_dir()
        .join("sessions")
        .join(id.to_string())
        .join("summary.md");
    assert!(!summary.exists());
    assert!(
        live.acplb
            .stderr()
            .contains("no summary: it did not come within the shutdown's limit")
    );
    assert!(live.codex_left().is_empty(), "{:?}", live.codex_left());
}

/// `acplb sessions ARGS` with this test's state directory; its stdout, once it succeeded.
fn sessions_cli(live: &Live, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
        .arg("sessions")
        .args(args)
        .env("ACPLB_STATE_DIR", live.state_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "sessions {args:?}: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_newest_first_and_filters_by_workspace_and_the_command_line_shows_a_session() {
    use agent_client_protocol::v1::schema::{ListSessionsRequest, NewSessionRequest};
    let mut live = Live::start();
    let ws = live.workspace();
    let sub = ws.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let updates = live.updates.clone();
    let (created, talked, pages, in_sub, bad) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, first) = open_session(&cx, &ws).await?;
            let talked = first.session_id.clone();
            prompt(&cx, &talked, "scenario:plain Tidy the README\nand more").await?;
            let mut created = vec![talked.to_string()];
            for n in 1..120 {
                let cwd = if n % 6 == 0 { &sub } else { &ws };
                let s = cx.send_request(NewSessionRequest::new(cwd)).block_task().await?;
                created.push(s.session_id.to_string());
            }
            // The session used last is the newest.
            prompt(&cx, &talked, "scenario:plain again").await?;
            let list = |cwd: Option<&std::path::Path>, cursor: Option<String>| {
                let mut req = ListSessionsRequest::new();
                req.cwd = cwd.map(ToOwned::to_owned);
                req.cursor = cursor;
                cx.send_request(req).block_task()
            };
            // What this process wrote to the registry is on disk before a list answers, so one
            // pass sees all 120 and the prompt just made.
            let mut pages = Vec::new();
            let mut cursor = None;
            loop {
                let page = list(None, cursor).await?;
                cursor = page.next_cursor.clone();
                pages.push(page);
                if cursor.is_none() {
                    break;
                }
            }
            let in_sub = list(Some(&sub), None).await?;
            let bad = list(None, Some("not-a-cursor".into())).await.unwrap_err();
            Ok((created, talked, pages, in_sub, bad))
        })
        .await
        .unwrap();
    let sizes: Vec<usize> = pages.iter().map(|p| p.sessions.len()).collect();
    assert_eq!(sizes, [50, 50, 20]);
    let listed: Vec<String> = pages
        .iter()
        .flat_map(|p| p.sessions.iter().map(|s| s.session_id.to_string()))
        .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    let mut all = created.clone();
    all.sort();
    assert_eq!(sorted, all, "every session once");
    let newest = &pages[0].sessions[0];
    assert_eq!(newest.session_id, talked, "the session used last comes first");
    assert_eq!(
        newest.title.as_deref(),
        Some("scenario:plain Tidy the README"),
        "the first prompt's first line"
    );
    assert!(newest.updated_at.is_some());
    let times: Vec<&str> = pages
        .iter()
        .flat_map(|p| p.sessions.iter().filter_map(|s| s.updated_at.as_deref()))
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert_eq!(in_sub.sessions.len(), 19, "sessions 6, 12, ... 114");
    assert!(in_sub.sessions.iter().all(|s| s.cwd == sub));
    assert!(bad.message.contains("invalid cursor"), "{}", bad.message);
    live.acplb.wait_exit(Duration::from_secs(10)).await;

    // The command line sees the same sessions.
    let json: Value = serde_json::from_str(&sessions_cli(&live, &["list", "--json"])).unwrap();
    let entries = json.as_array().unwrap();
    assert_eq!(entries.len(), 120);
    let entry = entries
        .iter()
        .find(|e| e["sessionId"] == talked.to_string())
        .unwrap();
    assert_eq!(entry["status"], "idle", "{entry}");
    assert!(entry["threadId"].is_string(), "{entry}");
    assert_eq!(
        entry["repoName"],
        ws.file_name().unwrap().to_str().unwrap(),
        "{entry}"
    );
    let shown = sessions_cli(&live, &["show", &talked.to_string()]);
    assert!(
        shown.contains("> scenario:plain Tidy the README\n> and more\n"),
        "{shown}"
    );
    assert!(shown.contains("── turn 2 ended: end_turn"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_session_releases_its_team_identity() {
    let team = crate::atm::Team::new(
        "[[plugin]]\nid = \"atm-identity\"\nrequired = true\nidentity = \"arch-ctm\"\nteam = \"demo\"\n",
    );
    let composer = team.composer();
    let mut live = Live::start_with(
        crate::atm::mock_config_with(""),
        &["--composer", &composer],
        &team.env(),
    );
    let ws = live.workspace();
    let updates = live.updates.clone();
    let lock = team.lock("arch-ctm");
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            assert!(lock.is_file(), "claimed for the session");
            prompt(&cx, &s.session_id, "scenario:plain hi").await?;
            cx.send_request(CloseSessionRequest::new(s.session_id.clone()))
                .block_task()
                .await?;
            assert!(
                !lock.exists(),
                "released when its last session closed, acplb still running"
            );
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    let json: Value = serde_json::from_str(&sessions_cli(
        &live,
        &["list", "--json", "--identity", "arch-ctm@demo"],
    ))
    .unwrap();
    let entry = &json.as_array().unwrap()[0];
    assert_eq!(entry["sessionId"], id.to_string());
    assert_eq!(entry["status"], "closed");
    assert_eq!(entry["identity"], "arch-ctm");
}

#[test]
fn the_sessions_command_says_why_it_cannot_show_a_session() {
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
            .arg("sessions")
            .args(args)
            .env("ACPLB_STATE_DIR", &state)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "an error: {args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = run(&["show", "0b6a3f0e-0000-4000-8000-000000000000"]);
    assert!(e.contains("no sessions yet: the state directory"), "{e}");
    std::fs::create_dir_all(state.join("sessions/damaged-1")).unwrap();
    let e = run(&["show", "0b6a3f0e-0000-4000-8000-000000000000"]);
    assert!(
        e.contains("no session `0b6a3f0e-0000-4000-8000-000000000000` is kept here"),
        "{e}"
    );
    let e = run(&["show", "../../etc/passwd"]);
    assert!(e.contains("is not a session id acplb hands out"), "{e}");
    std::fs::write(
        state.join("sessions/damaged-1/journal.jsonl"),
        "\u{0}\u{1}binary\n",
    )
    .unwrap();
    let e = run(&["show", "damaged-1"]);
    assert!(e.contains("is not an acplb session journal"), "{e}");
    let e = run(&["summary", "damaged-1"]);
    assert!(e.contains("is not an acplb session journal"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_open_in_another_acplb_is_not_opened_twice() {
    let mut live = Live::start();
    let ws = live.workspace();
    let mut other = live.another();
    let updates = live.updates.clone();
    let other_updates = crate::harness::Updates::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<SessionId>();
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let ws2 = ws.clone();
    // acplb A holds the session until B has tried, then closes it.
    let a = live.acplb.client(&updates, async |cx| {
        let (_, s) = open_session(&cx, &ws).await?;
        prompt(&cx, &s.session_id, "scenario:plain hello").await?;
        tx.send(s.session_id.clone()).unwrap();
        done_rx.recv().await;
        cx.send_request(CloseSessionRequest::new(s.session_id.clone()))
            .block_task()
            .await?;
        Ok(())
    });
    let b = other.client(&other_updates, async |cx| {
        initialize(&cx).await?;
        let id = rx.recv().await.unwrap();
        // A's entry was written when its session opened, long before its first turn ended.
        let refused = cx
            .send_request(LoadSessionRequest::new(id.clone(), &ws2))
            .block_task()
            .await
            .err()
            .map(|e| e.message);
        done_tx.send(()).unwrap();
        // Once A closed it, B may have it.
        let mut loaded = false;
        for _ in 0..100 {
            if cx
                .send_request(LoadSessionRequest::new(id.clone(), &ws2))
                .block_task()
                .await
                .is_ok()
            {
                loaded = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok((refused, loaded))
    });
    let (a, b) = tokio::join!(a, b);
    a.unwrap();
    let (refused, loaded) = b.unwrap();
    let refused = refused.expect("B was refused while A had the session open");
    assert!(
        refused.contains("is open in another acplb (process "),
        "{refused}"
    );
    assert!(loaded, "B loads it once A closed it");
}
