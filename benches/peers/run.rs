//! One measured run: launch an agent, `session/new`, wait as a user would, one prompt, peak RSS.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    InitializeRequest, NewSessionRequest, PromptRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, StopReason,
};
use agent_client_protocol::{Agent, ByteStreams, Client, on_receive_notification, on_receive_request};
use anyhow::{Context as _, bail};
use tokio::io::AsyncReadExt as _;
use tokio::process::Child;
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use acplb_playback::mock_model::LoggedRequest;

use crate::agent::{self, AgentSpec, Launcher};

/// A mock scenario measured, and what its answer must contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Scenario {
    /// A reasoning summary, then a final answer.
    Plain,
    /// A commentary message, `ls -la`, then a final answer quoting its output.
    Shell,
}

impl Scenario {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scenario::Plain => "plain",
            Scenario::Shell => "shell",
        }
    }

    fn prompt(self) -> &'static str {
        match self {
            Scenario::Plain => "scenario:plain Say hello and add 2 + 2.",
            Scenario::Shell => "scenario:shell List the files in this repository.",
        }
    }

    fn expected_text(self) -> &'static str {
        match self {
            Scenario::Plain => "2 + 2 = 4",
            Scenario::Shell => "The directory listing succeeded",
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// Launch → `session/new` reply (spawn, `initialize`, `session/new`).
    pub(crate) launch: Duration,
    /// Prompt sent → first `agent_message_chunk`.
    pub(crate) first_chunk: Duration,
    /// Prompt sent → `session/prompt` response.
    pub(crate) end_of_turn: Duration,
    /// `VmHWM` of the agent's own process, read after the turn and before it exits.
    pub(crate) peak_rss_kib: u64,
    /// `agent_message_chunk` notifications in the turn.
    pub(crate) chunks: usize,
    /// `tool_call` notifications in the turn.
    pub(crate) tool_calls: usize,
    /// The mode named in the `session/new` reply.
    pub(crate) mode: String,
    /// When the prompt was sent (the origin of the phases below).
    pub(crate) sent: Instant,
    /// Prompt sent → each model request's arrival at the mock (filled in by the caller, which owns
    /// the mock). The time between the first and the last is Codex's alone.
    pub(crate) model_requests: Vec<Duration>,
    /// Prompt sent → the first `tool_call`, and → the first `tool_call_update` that completed one.
    pub(crate) tool: (Option<Duration>, Option<Duration>),
    /// Names of the processes with this run's `CODEX_HOME` still alive a second after the agent
    /// exited (then killed).
    pub(crate) left_behind: Vec<String>,
}

/// How one run is paced and bounded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacing {
    /// Pause between the `session/new` reply and the prompt.
    pub(crate) think: Duration,
    /// Limit on the whole run.
    pub(crate) timeout: Duration,
}

/// Updates as they arrive, each with the instant it was read.
type Seen = Arc<Mutex<Vec<(Instant, serde_json::Value)>>>;

/// Starts `agent`, runs one turn of `scenario` and stops the agent.
pub(crate) async fn measure(
    launcher: &Launcher,
    agent: &AgentSpec,
    scenario: Scenario,
    pacing: Pacing,
) -> anyhow::Result<Sample> {
    let start = Instant::now();
    let mut child = launcher
        .command(agent)
        .spawn()
        .with_context(|| format!("failed to start {}", agent.name))?;
    let pid = child.id().context("the agent has no pid")?;
    let stderr = keep_stderr(&mut child);
    let result = tokio::time::timeout(
        pacing.timeout,
        drive(
            &mut child,
            pid,
            &launcher.workspace,
            scenario,
            pacing.think,
            start,
        ),
    )
    .await;
    let stopped = stop(&mut child).await;
    let left_behind = kill_left_behind(&launcher.home_marker).await;
    let tail = || tail_of(&stderr);
    let mut sample = match result {
        Ok(Ok(sample)) => sample,
        Ok(Err(e)) => return Err(e.context(format!("{} failed; its stderr ends:\n{}", agent.name, tail()))),
        Err(_) => bail!(
            "{} did not finish a {} turn within {:?}; its stderr ends:\n{}",
            agent.name,
            scenario.name(),
            pacing.timeout,
            tail()
        ),
    };
    stopped.with_context(|| format!("{} did not stop", agent.name))?;
    sample.left_behind = left_behind;
    Ok(sample)
}

/// The ACP client's side of a run, over the agent's real stdio.
async fn drive(
    child: &mut Child,
    pid: u32,
    cwd: &Path,
    scenario: Scenario,
    think: Duration,
    launched: Instant,
) -> anyhow::Result<Sample> {
    let stdin = child.stdin.take().context("stdin piped")?;
    let stdout = child.stdout.take().context("stdout piped")?;
    let seen = Seen::default();
    let sink = seen.clone();
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let cwd = cwd.to_path_buf();
    // Requests without a handler (fs, terminal) get "method not found"; the client advertises
    // neither, so no agent should send them.
    Client
        .v1()
        .name("acplb-bench-peers")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                let at = Instant::now();
                let update = serde_json::to_value(&n.update).unwrap_or_default();
                if let Ok(mut seen) = sink.lock() {
                    seen.push((at, update));
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest,
                        responder: agent_client_protocol::v1::Responder<RequestPermissionResponse>,
                        _cx| {
                // The first option that allows, as a user who says yes would pick.
                let allow = req
                    .options
                    .iter()
                    .find(|o| {
                        serde_json::to_value(o.kind)
                            .is_ok_and(|k| k.as_str().is_some_and(|k| k.starts_with("allow")))
                    })
                    .map(|o| o.option_id.clone());
                responder.respond(RequestPermissionResponse::new(match allow {
                    Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                    None => RequestPermissionOutcome::Cancelled,
                }))
            },
            on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            Ok(turn(&cx, pid, &cwd, scenario, think, launched, &seen).await)
        })
        .await
        .context("ACP connection failed")?
}

/// `initialize`, `session/new`, the pause, one prompt, then the agent's peak RSS.
async fn turn(
    cx: &ConnectionTo<Agent>,
    pid: u32,
    cwd: &Path,
    scenario: Scenario,
    think: Duration,
    launched: Instant,
    seen: &Seen,
) -> anyhow::Result<Sample> {
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
        .block_task()
        .await
        .context("initialize failed")?;
    let session = cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await
        .context("session/new failed")?;
    let launch = launched.elapsed();
    let mode = session
        .modes
        .as_ref()
        .map(|m| m.current_mode_id.to_string())
        .unwrap_or_default();
    if mode != agent::MODE {
        bail!("the session runs in mode `{mode}`, not `{}`", agent::MODE);
    }
    tokio::time::sleep(think).await;
    let sent = Instant::now();
    let response = cx
        .send_request(PromptRequest::new(
            session.session_id.clone(),
            vec![scenario.prompt().into()],
        ))
        .block_task()
        .await
        .context("session/prompt failed")?;
    let end_of_turn = sent.elapsed();
    let peak_rss_kib = agent::peak_rss_kib(pid)?;
    if response.stop_reason != StopReason::EndTurn {
        bail!("the turn ended with {:?}", response.stop_reason);
    }
    let updates = seen.lock().map(|s| s.clone()).unwrap_or_default();
    let of_kind = |kind: &'static str| updates.iter().filter(move |(_, u)| u["sessionUpdate"] == kind);
    let text: String = of_kind("agent_message_chunk")
        .filter_map(|(_, u)| u["content"]["text"].as_str())
        .collect();
    if !text.contains(scenario.expected_text()) {
        bail!("the answer lacks `{}`: {text:?}", scenario.expected_text());
    }
    let first_chunk = of_kind("agent_message_chunk")
        .map(|(at, _)| *at)
        .find(|at| *at >= sent)
        .context("no agent_message_chunk after the prompt")?;
    let tool_calls = of_kind("tool_call").count();
    if scenario == Scenario::Shell && tool_calls == 0 {
        bail!("the shell turn showed no tool call");
    }
    Ok(Sample {
        launch,
        first_chunk: first_chunk - sent,
        end_of_turn,
        peak_rss_kib,
        chunks: of_kind("agent_message_chunk").count(),
        tool_calls,
        mode,
        sent,
        model_requests: Vec::new(),
        tool: (
            of_kind("tool_call").map(|(at, _)| *at - sent).next(),
            of_kind("tool_call_update")
                .find(|(_, u)| u["status"] == "completed")
                .map(|(at, _)| *at - sent),
        ),
        left_behind: Vec::new(),
    })
}

/// Prompt sent → each model request (`/responses`) the mock received after it.
pub(crate) fn model_requests(sample: &Sample, requests: &[LoggedRequest]) -> Vec<Duration> {
    requests
        .iter()
        .filter(|r| r.path.ends_with("/responses") && r.received >= sample.sent)
        .map(|r| r.received - sample.sent)
        .collect()
}

/// Where the turn's time went, from the prompt: each model request's arrival at the mock, the
/// first tool call and its completion as the client saw them (progress output, for profiling).
pub(crate) fn timeline(sample: &Sample) -> String {
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1e3);
    let model: Vec<String> = sample.model_requests.iter().map(|d| ms(*d)).collect();
    let tool = match sample.tool {
        (Some(start), Some(done)) => format!("  tool {}..{}", ms(start), ms(done)),
        _ => String::new(),
    };
    format!("model at [{}]{tool}", model.join(", "))
}

/// Closes stdin (both agents stop on EOF), waits up to 5 s, then kills the process group.
async fn stop(child: &mut Child) -> anyhow::Result<()> {
    drop(child.stdin.take());
    let exited = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // The group the agent led: anything it left in it.
        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).ok();
    }
    let Ok(status) = exited else {
        child.kill().await.ok();
        bail!("it was still running 5 s after its stdin closed")
    };
    status.map(drop).context("waiting for the agent failed")
}

/// Kills the processes that still carry this run's `CODEX_HOME` a second after the agent exited
/// (the time acplb allows its descendants); returns their names.
async fn kill_left_behind(marker: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut pids = agent::processes_with_env(marker);
    while !pids.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        pids = agent::processes_with_env(marker);
    }
    let names = pids.iter().map(|pid| agent::process_name(*pid)).collect();
    for pid in &pids {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .ok();
    }
    names
}

/// Collects the agent's stderr, keeping the last 16 KiB for error reports.
fn keep_stderr(child: &mut Child) -> Arc<Mutex<Vec<u8>>> {
    let kept = Arc::new(Mutex::new(Vec::new()));
    if let Some(mut pipe) = child.stderr.take() {
        let keep = kept.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = keep.lock() {
                    kept.extend_from_slice(&buf[..n]);
                    let excess = kept.len().saturating_sub(16 * 1024);
                    kept.drain(..excess);
                }
            }
        });
    }
    kept
}

fn tail_of(stderr: &Arc<Mutex<Vec<u8>>>) -> String {
    stderr
        .lock()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}
