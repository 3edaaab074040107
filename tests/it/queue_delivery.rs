//! The input queue delivered into editor sessions, end to end with the real Codex on both
//! transports: `acplb queue send` to an idle session shows a notice and the message goes with
//! the next prompt; during a turn it is steered in (app-server) or waits for the next prompt
//! (exec); damaged files, closed sessions and an acplb killed holding a claim lose nothing and
//! deliver nothing twice.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, MockModelHandle, Script};
use agent_client_protocol::v1::schema::{CloseSessionRequest, LoadSessionRequest, PromptRequest, SessionId};

use crate::harness::{Updates, eventually, open_session, prompt, transport};
use crate::live::{Live, set_mode};

const SCENARIOS: &str = r#"
[scenarios.q_busy]
[[scenarios.q_busy.steps]]
actions = [{ type = "exec", cmd = "sleep 3", yield_time_ms = 10000 }]
[[scenarios.q_busy.steps]]
actions = [{ type = "message", text = "the busy turn is over" }]
"#;

const PATIENCE: Duration = Duration::from_secs(30);

pub fn live() -> Live {
    let script = Script::builtin().layered_with(Script::from_toml_str(SCENARIOS, "queue-test").unwrap());
    Live::start_with(MockConfig::default().with_script(script), &[], &[])
}

/// `acplb queue send TARGET TEXT --from FROM` with the test's state directory; the message id.
pub fn send(state: &Path, target: &str, text: &str, from: &str) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
        .args(["queue", "send", target, text, "--from", from])
        .env("ACPLB_STATE_DIR", state)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn queue_dir(live: &Live, id: &SessionId) -> PathBuf {
    live.state_dir().join("queue").join(id.to_string())
}

/// The file names in a queue folder, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().into_string().unwrap()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// A file name's extension (`json`, `claimed`, `bad`).
fn ext(name: &str) -> &str {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
}

/// How many requests to the model carried `needle` (as it appears in the JSON body).
pub fn requests_with(mock: &MockModelHandle, needle: &str) -> usize {
    mock.requests()
        .iter()
        .filter(|r| r.body.to_string().contains(needle))
        .count()
}

/// Notices about queued messages the editor was shown (as notices or agent text) that say
/// `what`.
pub fn notices(updates: &Updates, what: &str) -> usize {
    updates
        .json()
        .iter()
        .filter_map(|u| match u["sessionUpdate"].as_str() {
            Some("agent_message_chunk") => u["content"]["text"].as_str().map(str::to_owned),
            Some("notice") => u["title"].as_str().map(str::to_owned),
            _ => None,
        })
        .filter(|t| t.contains("A queued message from") && t.contains(what))
        .count()
}

pub const HELD: &str = "it will go with your next prompt";
const STEERED: &str = "was sent into the running turn";

/// The envelope's opening as a request body (JSON) shows it.
fn opening(from: &str, id: &str) -> (String, String) {
    (
        format!(r#"<queued-message from=\"{from}\" time=\"20"#),
        format!(r#"id=\"{id}\">\n"#),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_shows_a_notice_and_the_next_prompt_carries_the_message() {
    let mut live = live();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let mock = &live.mock;
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let sent = send(
                &state,
                &s.session_id.to_string(),
                "IDLE-TOKEN <b>look</b>",
                "ci@test",
            );
            assert!(
                eventually(PATIENCE, || notices(&watch, HELD) == 1).await,
                "the editor is told: {:?}",
                watch.json()
            );
            assert_eq!(notices(&watch, "ci@test"), 1);
            assert_eq!(requests_with(mock, "IDLE-TOKEN"), 0, "nothing before the prompt");
            prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            let (from, id) = opening("ci@test", &sent);
            assert_eq!(requests_with(mock, &from), 1, "enveloped");
            assert_eq!(
                requests_with(mock, &format!("{id}IDLE-TOKEN &lt;b&gt;look&lt;/b&gt;")),
                1
            );
            assert_eq!(requests_with(mock, "scenario:plain hello"), 1, "with the prompt");
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(
        files(&queue_dir(&live, &id)),
        Vec::<String>::new(),
        "delivered and removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_a_turn_the_message_is_steered_on_app_server_and_waits_on_exec() {
    let mut live = live();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let mock = &live.mock;
    let app_server = transport() == "app-server";
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "full-access").await?;
            let busy = cx.send_request(PromptRequest::new(
                s.session_id.clone(),
                vec!["scenario:q_busy go".into()],
            ));
            assert!(
                eventually(PATIENCE, || !watch.of_kind("tool_call").is_empty()).await,
                "the turn runs its command"
            );
            send(&state, &s.session_id.to_string(), "BUSY-TOKEN", "lead@core");
            busy.block_task().await?;
            let in_turn = requests_with(mock, "BUSY-TOKEN");
            if app_server {
                assert!(in_turn >= 1, "steered into the running turn");
                assert_eq!(notices(&watch, STEERED), 1);
                assert_eq!(notices(&watch, HELD), 0);
            } else {
                assert_eq!(in_turn, 0, "exec cannot steer");
                assert!(
                    eventually(PATIENCE, || notices(&watch, HELD) == 1).await,
                    "announced once the turn is over"
                );
            }
            prompt(&cx, &s.session_id, "scenario:plain next").await?;
            let next = requests_with(mock, "scenario:plain next");
            assert_eq!(next, 1);
            // On exec the next prompt carries it; on app-server it is in the history.
            assert_eq!(
                mock.requests()
                    .iter()
                    .filter(|r| {
                        let body = r.body.to_string();
                        body.contains("scenario:plain next") && body.contains("BUSY-TOKEN")
                    })
                    .count(),
                1
            );
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(files(&queue_dir(&live, &id)), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_file_is_set_aside_and_a_closed_session_gets_its_message_after_load() {
    let mut live = live();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let mock = &live.mock;
    let id = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let target = s.session_id.to_string();
            let dir = state.join("queue").join(&target);
            std::fs::create_dir_all(&dir).unwrap();
            let bad = "0190c5d0-0000-4000-8000-0000000000ba";
            std::fs::write(dir.join(format!("{bad}.json")), "{not json").unwrap();
            send(&state, &target, "AFTER-BAD-TOKEN", "ci@test");
            assert!(eventually(PATIENCE, || notices(&watch, HELD) == 1).await);
            assert!(files(&dir).contains(&format!("{bad}.bad")), "{:?}", files(&dir));
            cx.send_request(CloseSessionRequest::new(s.session_id.clone()))
                .block_task()
                .await?;
            // Closing put the held message back; a message sent now waits too.
            let sent = send(&state, &target, "CLOSED-TOKEN", "ci@test");
            let waiting = files(&dir);
            assert!(waiting.contains(&format!("{sent}.json")), "{waiting:?}");
            assert!(!waiting.iter().any(|f| ext(f) == "claimed"), "{waiting:?}");
            assert_eq!(
                waiting.iter().filter(|f| ext(f) == "json").count(),
                2,
                "{waiting:?}"
            );

            cx.send_request(LoadSessionRequest::new(s.session_id.clone(), &ws))
                .block_task()
                .await?;
            assert!(
                eventually(PATIENCE, || notices(&watch, HELD) == 4).await,
                "the replayed notice, then both announced again: {:?}",
                watch.json()
            );
            prompt(&cx, &s.session_id, "scenario:plain loaded").await?;
            let both = mock
                .requests()
                .iter()
                .filter(|r| {
                    let body = r.body.to_string();
                    body.contains("AFTER-BAD-TOKEN") && body.contains("CLOSED-TOKEN")
                })
                .count();
            assert_eq!(both, 1, "both go with the prompt after the load");
            Ok(s.session_id)
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    let left = files(&queue_dir(&live, &id));
    assert_eq!(left.len(), 1, "only the damaged file is left: {left:?}");
    assert!(ext(&left[0]) == "bad");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_held_by_a_killed_acplb_is_delivered_once_after_load() {
    let mut live = live();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let pid = live.acplb.pid;
    let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
    let keep = kept.clone();
    let _broken = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            *keep.lock().unwrap() = Some(s.session_id.clone());
            let sent = send(&state, &s.session_id.to_string(), "KILLED-TOKEN", "ci@test");
            assert!(eventually(PATIENCE, || notices(&watch, HELD) == 1).await);
            let dir = state.join("queue").join(s.session_id.to_string());
            assert_eq!(files(&dir), vec![format!("{sent}.claimed")], "held as a claim");
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

    live.respawn();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let mock = &live.mock;
    live.acplb
        .client(&updates, async |cx| {
            cx.send_request(agent_client_protocol::v1::schema::InitializeRequest::new(
                agent_client_protocol::schema::ProtocolVersion::V1,
            ))
            .block_task()
            .await?;
            cx.send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            // The replay shows the first notice again; the second is new.
            assert!(
                eventually(PATIENCE, || notices(&watch, HELD) == 2).await,
                "{:?}",
                watch.json()
            );
            prompt(&cx, &id, "scenario:plain after the kill").await?;
            let carrying: Vec<String> = mock
                .requests()
                .iter()
                .map(|r| r.body.to_string())
                .filter(|b| b.contains("KILLED-TOKEN"))
                .collect();
            assert_eq!(carrying.len(), 1, "one request carries it");
            assert_eq!(carrying[0].matches("KILLED-TOKEN").count(), 1, "once");
            Ok(())
        })
        .await
        .unwrap();
    live.acplb.wait_exit(Duration::from_secs(10)).await;
    assert_eq!(files(&queue_dir(&live, &id)), Vec::<String>::new());
}
