//! `playback run`: replays a scenario through the real acplb binary, with playback itself as
//! Codex (a `codex` symlink passed with `--codex`), and returns acplb's normalized output.

mod prepare;

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;

use crate::client::{self, Substitutions};
use crate::error::PlaybackError;
use crate::output::{self, Observed};
use crate::scenario::Scenario;
use crate::standin::{self, Speed};

/// Variables of the user's environment that would change how acplb behaves in a replay.
const ACPLB_VARS: [&str; 5] = [
    "ACPLB_CODEX",
    "ACPLB_TRANSCRIPT_DIR",
    "ACPLB_LOG_FILE",
    "ACPLB_COMPOSER",
    "ACPLB_CODEX_RUST_LOG",
];
/// acplb's log level in a replay: `$PLAYBACK_ACPLB_LOG`, else this.
const ACPLB_LOG: &str = "warn";
/// The last bytes of acplb's stderr kept for messages.
const STDERR_TAIL: usize = 16 * 1024;

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The acplb binary.
    pub acplb: PathBuf,
    /// The playback binary (the stand-in for Codex).
    pub playback: PathBuf,
    /// Stand-in speed.
    pub speed: Speed,
    /// Longest wait for any one thing (a response, acplb's exit).
    pub wait: Duration,
}

/// What a replay produced.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The output lines, normalized (what `[expect] output` holds).
    pub output: Vec<String>,
    /// Problems seen on the way (the client stopped early, the stand-in had no run left, ...).
    pub notes: Vec<String>,
    /// The end of acplb's stderr.
    pub acplb_stderr: String,
}

/// Replays `scenario`; errors are about the setup (no acplb, no temp dir), not about acplb's
/// behaviour, which shows in the output and the notes.
pub async fn replay(scenario: &Scenario, opts: &ReplayOptions) -> Result<Replay, PlaybackError> {
    let dir = prepare::prepare(scenario, &opts.playback, opts.speed)?;
    let cwd = dir.cwd().display().to_string();
    let subst = Substitutions {
        cwd: cwd.clone(),
        playback: opts.playback.display().to_string(),
    };
    let args: Vec<String> = scenario
        .acplb_args
        .iter()
        .map(|a| {
            a.replace("<cwd>", &subst.cwd)
                .replace("<playback>", &subst.playback)
        })
        .collect();
    if let Some(model) = &scenario.codex_model {
        write_codex_config(&dir.home().join(".codex"), model)?;
    }
    let mut command = tokio::process::Command::new(&opts.acplb);
    command
        .arg("--codex")
        .arg(dir.codex())
        .args(&args)
        .current_dir(dir.cwd())
        .env(standin::STATE_DIR_VAR, dir.state())
        // A home of its own: no user config (composer, Codex, agent teams) reaches acplb.
        .env("HOME", dir.home())
        .env("CODEX_HOME", dir.home().join(".codex"))
        .env("XDG_CONFIG_HOME", dir.home().join(".config"))
        .env(
            "RUST_LOG",
            std::env::var("PLAYBACK_ACPLB_LOG").unwrap_or_else(|_| ACPLB_LOG.to_owned()),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for var in ACPLB_VARS {
        command.env_remove(var);
    }
    // The transport the scenario was recorded on; a `--transport` in its arguments wins.
    command.env("ACPLB_TRANSPORT", scenario.transport.as_str());
    // The recordings hold no `model/list` nor `skills/list`: the compiled-in models (and no skills) are offered, as recorded.
    command.env("ACPLB_CODEX_MODEL_LIST", "off");
    command.env("ACPLB_CODEX_SKILL_LIST", "off");
    command.env("ACPLB_CODEX_PROFILE_LIST", "off");
    let mut child = command.spawn().map_err(|source| PlaybackError::Spawn {
        program: opts.acplb.clone(),
        source,
    })?;
    let stderr = collect_stderr(&mut child);
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(PlaybackError::Session("acplb's stdio was not piped".to_owned()));
    };
    let run = client::drive(
        &scenario.client,
        &scenario.answers,
        &subst,
        stdin,
        stdout,
        opts.wait,
    )
    .await;
    let status = wait_exit(&mut child, opts.wait).await;
    let acplb_stderr = stderr.lock().map(|s| s.clone()).unwrap_or_default();

    let seen = Observed {
        cwds: vec![cwd],
        sessions: run.sessions.clone(),
        threads: scenario.thread_ids(),
        playback: Some(&opts.playback),
        home: Some(dir.home().display().to_string()),
        codex: Some(dir.codex().display().to_string()),
    };
    let mut norm = output::normalizer(&seen);
    let mut lines: Vec<String> = run.received.iter().map(|l| norm.json_line(l)).collect();
    for (i, s) in standin::read_seen(&dir.state()).iter().enumerate() {
        lines.push(output::codex_line(i + 1, &s.argv, s.stdin_bytes, &norm));
    }
    for (i, (seen, sent)) in standin::read_seen_app_servers(&dir.state()).iter().enumerate() {
        lines.extend(output::app_server_lines(i + 1, &seen.argv, sent, &mut norm));
    }
    lines.push(output::exit_line(status));
    let mut notes: Vec<String> = run.error.into_iter().collect();
    notes.extend(standin::read_notes(&dir.state()));
    Ok(Replay {
        output: lines,
        notes,
        acplb_stderr,
    })
}

/// Keeps the end of acplb's stderr (read on a task so a chatty acplb never blocks).
fn collect_stderr(child: &mut tokio::process::Child) -> Arc<Mutex<String>> {
    let kept = Arc::new(Mutex::new(String::new()));
    if let Some(mut pipe) = child.stderr.take() {
        let sink = Arc::clone(&kept);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut text) = sink.lock() {
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                    if text.len() > STDERR_TAIL {
                        let mut cut = text.len() - STDERR_TAIL;
                        while !text.is_char_boundary(cut) {
                            cut += 1;
                        }
                        text.drain(..cut);
                    }
                }
            }
        });
    }
    kept
}

/// Waits for acplb to exit after its stdin closed; kills it past `limit` (`None` then).
async fn wait_exit(child: &mut tokio::process::Child, limit: Duration) -> Option<ExitStatus> {
    if let Ok(Ok(status)) = tokio::time::timeout(limit, child.wait()).await {
        return Some(status);
    }
    if let Err(e) = child.kill().await {
        tracing::debug!(error = %e, "killing acplb failed");
    }
    None
}

/// The recorded Codex configuration: just the model, which is what acplb reads of it.
fn write_codex_config(codex_home: &std::path::Path, model: &str) -> Result<(), PlaybackError> {
    std::fs::create_dir_all(codex_home).map_err(PlaybackError::io(codex_home))?;
    let file = codex_home.join("config.toml");
    let text = format!("model = {}\n", toml::Value::String(model.to_owned()));
    std::fs::write(&file, text).map_err(PlaybackError::io(&file))
}
