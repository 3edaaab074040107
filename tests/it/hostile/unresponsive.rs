//! A Codex that stops answering: frozen (`SIGSTOP`), hung in `initialize`, or flooding and
//! deaf to an interrupt. The prompt is answered with an error naming what Codex did not do
//! (never left to the 30-minute turn limit), the server is stopped and replaced by the next
//! prompt, and a cancel (or a `session/close`) is answered within a second whatever Codex does.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, PromptRequest, PromptResponse, SessionId, StopReason,
};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::stand_in::{app_server, fake_codex, spawn_app_server};
use crate::harness::{
    Updates, eventually, open_session, processes_with_env, prompt, transport, until_sleeping,
};
use crate::live::Live;

/// The hidden setting that shortens every time limit on requests to Codex, for tests.
const LIMIT_VAR: &str = "ACPLB_CODEX_REQUEST_TIMEOUT_MS";

/// Far below the turn limit, far above what acplb needs: a prompt not answered by then hangs.
const NO_HANG: Duration = Duration::from_secs(40);

/// Live Codex processes of this test (`marker`: its `CODEX_HOME=`) run as `codex <sub>`.
fn codex_processes(marker: &str, sub: &str) -> Vec<u32> {
    processes_with_env(marker)
        .into_iter()
        .filter(|p| {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            cmdline.split(|b| *b == 0).nth(1) == Some(sub.as_bytes())
        })
        .collect()
}

/// Processes this test froze with `SIGSTOP`; those still alive (and still this test's) are
/// let go with `SIGCONT` when it is dropped, so no test leaves a process stopped.
struct Frozen {
    pids: Vec<u32>,
    marker: String,
}

impl Frozen {
    fn freeze(marker: &str, pids: Vec<u32>) -> Frozen {
        assert!(!pids.is_empty(), "nothing to freeze");
        for pid in &pids {
            kill(Pid::from_raw(*pid as i32), Signal::SIGSTOP).unwrap();
        }
        Frozen {
            pids,
            marker: marker.to_owned(),
        }
    }

    fn thaw(&self) {
        let ours = processes_with_env(&self.marker);
        for pid in self.pids.iter().filter(|p| ours.contains(p)) {
            kill(Pid::from_raw(*pid as i32), Signal::SIGCONT).ok();
        }
    }

    /// Whether every frozen process is gone (or a zombie).
    fn all_gone(&self) -> bool {
        let ours = processes_with_env(&self.marker);
        !self.pids.iter().any(|p| ours.contains(p))
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        self.thaw();
    }
}

/// The live setup with every request limit at 4 s (far from the defaults, and far enough from
/// how long a real Codex takes to answer on a loaded machine).
fn live_with_short_limits() -> Live {
    let env = [(LIMIT_VAR.to_owned(), "4000".to_owned())];
    Live::start_with(MockConfig::default(), &[], &env)
}

/// Sends `scenario:sleep wait` in `session` and, once its `sleep 30` shows, runs `meanwhile`;
/// returns the prompt's answer (which must come within [`NO_HANG`]) and what `meanwhile` gave.
async fn while_sleeping<T>(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    updates: &Updates,
    meanwhile: impl AsyncFnOnce() -> T,
) -> (Result<PromptResponse, agent_client_protocol::Error>, T) {
    let request = PromptRequest::new(session.clone(), vec!["scenario:sleep wait".into()]);
    let turn = async {
        tokio::time::timeout(NO_HANG, cx.send_request(request).block_task())
            .await
            .expect("the prompt is answered")
    };
    let meanwhile = async {
        until_sleeping(updates).await;
        meanwhile().await
    };
    tokio::join!(turn, meanwhile)
}

#[tokio::test]
async fn a_frozen_app_server_is_declared_dead_stopped_and_replaced_by_the_next_prompt() {
    if transport() == "exec" {
        // Nothing of Codex runs between exec turns: each prompt starts a Codex of its own.
        return;
    }
    let mut live = live_with_short_limits();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let (stuck, took, frozen, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            prompt(&cx, &s.session_id, "scenario:plain hi").await?;
            let frozen = Frozen::freeze(&marker, codex_processes(&marker, "app-server"));
            let at = Instant::now();
            let stuck = tokio::time::timeout(NO_HANG, prompt(&cx, &s.session_id, "scenario:plain again"))
                .await
                .expect("a prompt on a frozen server is answered");
            let took = at.elapsed();
            let next = prompt(&cx, &s.session_id, "scenario:plain back?").await;
            Ok((stuck, took, frozen, next))
        })
        .await
        .unwrap();
    let err = stuck.expect_err("the frozen server cannot run the turn");
    assert_eq!(serde_json::to_value(&err).unwrap()["code"], -32603, "{err:?}");
    assert!(
        err.message
            .contains("app-server` did not answer `turn/start` within 4s"),
        "{err:?}"
    );
    assert!(!err.message.contains("--turn-timeout"), "{err:?}");
    assert!(took < Duration::from_secs(12), "{took:?}");
    assert!(
        eventually(Duration::from_secs(5), || frozen.all_gone()).await,
        "the frozen server was stopped"
    );
    let next = next.unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next.stop_reason, StopReason::EndTurn, "a new server took over");
}

#[tokio::test]
async fn an_app_server_frozen_mid_turn_fails_the_turn_instead_of_running_to_the_limit() {
    if transport() == "exec" {
        // An exec turn's Codex is the turn: a frozen one is stopped by cancel or the turn limit.
        return;
    }
    let mut live = live_with_short_limits();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let acplb_pid = live.acplb.pid;
    let (stuck, took, frozen, left, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let (stuck, (frozen, at)) = while_sleeping(&cx, &s.session_id, &updates, async || {
                let frozen = Frozen::freeze(&marker, codex_processes(&marker, "app-server"));
                (frozen, Instant::now())
            })
            .await;
            let took = at.elapsed();
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(5)).await;
            let next = prompt(&cx, &s.session_id, "scenario:plain back?").await;
            Ok((stuck, took, frozen, left, next))
        })
        .await
        .unwrap();
    let err = stuck.expect_err("the frozen server cannot finish the turn");
    assert!(
        err.message
            .contains("app-server` did not answer a health check within 4s"),
        "{err:?}"
    );
    // Silent for a limit at the next watch, then a limit for the health check.
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(
        updates.closed_as_failed("sleep 30"),
        "the open tool call was closed"
    );
    assert!(frozen.all_gone(), "the frozen server was stopped");
    assert!(left.is_empty(), "the turn's command was stopped too: {left:?}");
    let next = next.unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next.stop_reason, StopReason::EndTurn, "a new server took over");
}

#[tokio::test]
async fn a_hung_initialize_is_one_bounded_attempt_shared_by_every_waiting_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let codex = fake_codex(
        dir.path(),
        &format!(
            "echo started >> '{}'\necho 'codex: loading the model catalog' >&2\nexec sleep 600",
            starts.display()
        ),
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[(LIMIT_VAR, "2000")]);
    let cwd = dir.path().to_owned();
    let (first, second, again) = acplb
        .client(&Updates::default(), async |cx| {
            let (_, a) = open_session(&cx, &cwd).await?;
            let b = cx
                .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(&cwd))
                .block_task()
                .await?;
            let timed = async |session| {
                let at = Instant::now();
                let result = tokio::time::timeout(NO_HANG, prompt(&cx, session, "hello"))
                    .await
                    .expect("a prompt on a hung server is answered");
                (result, at.elapsed())
            };
            // The openings' asks for Codex's model list (behind their answers) and both
            // prompts all wait on one start.
            let count = || std::fs::read_to_string(&starts).map_or(0, |s| s.lines().count());
            let (first, second) = tokio::join!(timed(&a.session_id), timed(&b.session_id));
            let once = count();
            let again = timed(&a.session_id).await;
            let twice = count();
            Ok((first, second, (again, once, twice)))
        })
        .await
        .unwrap();
    let ((again, again_took), started_once, started_twice) = again;
    for (result, took) in [first, second, (again, again_took)] {
        let err = result.expect_err("Codex never answered `initialize`");
        assert_eq!(serde_json::to_value(&err).unwrap()["code"], -32603, "{err:?}");
        assert!(
            err.message
                .contains("app-server` did not answer `initialize` within 2s"),
            "{err:?}"
        );
        assert!(
            err.message.contains("loading the model catalog"),
            "its stderr is shown: {err:?}"
        );
        // One attempt: two in a row would take 4 s.
        assert!(took < Duration::from_millis(3500), "{took:?}");
    }
    assert_eq!(
        started_once, 1,
        "the openings' model-list asks and both prompts waited on the one attempt"
    );
    assert_eq!(started_twice, 2, "the next prompt made one attempt of its own");
}

#[tokio::test]
async fn a_cancel_is_answered_within_a_second_while_codex_is_frozen() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let sub = if transport() == "exec" {
        "exec"
    } else {
        "app-server"
    };
    let (stop, took, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let (resp, (frozen, at)) = while_sleeping(&cx, &s.session_id, &updates, async || {
                let frozen = Frozen::freeze(&marker, codex_processes(&marker, sub));
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))
                    .unwrap();
                (frozen, at)
            })
            .await;
            let took = at.elapsed();
            frozen.thaw();
            let next = prompt(&cx, &s.session_id, "scenario:plain still there?").await;
            Ok((resp?.stop_reason, took, next))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_millis(1500), "cancel took {took:?}");
    let next = next.unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next.stop_reason, StopReason::EndTurn, "the session still works");
}

#[tokio::test]
async fn a_cancel_is_answered_within_a_second_while_codex_floods_and_ignores_the_interrupt() {
    let dir = tempfile::tempdir().unwrap();
    // Starts the turn, then floods deltas and never reads stdin again (no interrupt heard).
    let codex = app_server(
        dir.path(),
        r#"echo "{\"id\":$i,\"result\":{\"turn\":{\"id\":\"tu-1\"}}}"
      exec yes "{\"method\":\"item/agentMessage/delta\",\"params\":{\"threadId\":\"th-$n\",\"turnId\":\"tu-1\",\"itemId\":\"m1\",\"delta\":\"x\"}}""#,
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let (stop, took) = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let request = PromptRequest::new(s.session_id.clone(), vec!["flood".into()]);
            let turn = cx.send_request(request).block_task();
            let canceller = async {
                assert!(
                    eventually(Duration::from_secs(10), || !updates.agent_text().is_empty()).await,
                    "the flood never started"
                );
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(s.session_id.clone()))
                    .unwrap();
                at
            };
            let (resp, at) = tokio::join!(turn, canceller);
            Ok((resp?.stop_reason, at.elapsed()))
        })
        .await
        .unwrap();
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_millis(1500), "cancel took {took:?}");
}

/// `session/close` while Codex runs a slow command (both transports): the prompt is answered
/// `cancelled` and the close answered, both within a second and a half, and acplb serves on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_mid_turn_answers_the_prompt_cancelled_and_the_close_at_once() {
    let mut live = Live::start();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let (stop, took, next) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let (resp, (closed, at)) = while_sleeping(&cx, &s.session_id, &updates, async || {
                let at = Instant::now();
                let close = cx.send_request(CloseSessionRequest::new(s.session_id.clone()));
                let closed = tokio::time::timeout(NO_HANG, close.block_task())
                    .await
                    .expect("the close is answered");
                (closed, at)
            })
            .await;
            closed?;
            let took = at.elapsed();
            let (_, other) = open_session(&cx, &ws).await?;
            let next = prompt(&cx, &other.session_id, "scenario:plain still there?").await;
            Ok((resp?.stop_reason, took, next))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert!(took < Duration::from_millis(1500), "the close took {took:?}");
    let next = next.unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(next.stop_reason, StopReason::EndTurn, "acplb serves on");
}
