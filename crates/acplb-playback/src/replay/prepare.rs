//! The replay's temporary directory: the workspace (files, git), the `codex` symlink to
//! playback, and the stand-in's state with the recorded runs.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::error::PlaybackError;
use crate::scenario::{EventKind, Scenario};
use crate::standin::{self, Speed, State};

/// The directories of one replay, removed on drop.
#[derive(Debug)]
pub(super) struct ReplayDir {
    dir: tempfile::TempDir,
}

impl ReplayDir {
    pub(super) fn cwd(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    pub(super) fn codex(&self) -> PathBuf {
        self.dir.path().join("bin").join("codex")
    }

    pub(super) fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    pub(super) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
}

/// Makes the directories, the workspace and the stand-in state for `scenario`.
pub(super) fn prepare(
    scenario: &Scenario,
    playback: &Path,
    speed: Speed,
) -> Result<ReplayDir, PlaybackError> {
    let dir = tempfile::Builder::new()
        .prefix("playback-")
        .tempdir()
        .map_err(PlaybackError::io(std::env::temp_dir()))?;
    let replay = ReplayDir { dir };
    for d in [
        replay.cwd(),
        replay.home(),
        replay.state(),
        replay.dir.path().join("bin"),
    ] {
        std::fs::create_dir_all(&d).map_err(PlaybackError::io(&d))?;
    }
    let codex = replay.codex();
    std::os::unix::fs::symlink(playback, &codex).map_err(PlaybackError::io(&codex))?;
    write_workspace(scenario, &replay.cwd())?;
    standin::write_state(
        &replay.state(),
        &State {
            scenario: scenario.path(),
            cwd: replay.cwd(),
            speed,
            runs: runs_for(scenario, &replay.cwd()),
            transport: scenario.transport,
            app_servers: app_servers_for(scenario, &replay.cwd(), playback),
        },
    )?;
    Ok(replay)
}

/// The recorded runs with `<cwd>` replaced by the replay's workspace.
fn runs_for(scenario: &Scenario, cwd: &Path) -> Vec<crate::scenario::ProviderRun> {
    let raw = cwd.display().to_string();
    let quoted = serde_json::Value::String(raw.clone()).to_string();
    let in_json = &quoted[1..quoted.len() - 1];
    let mut runs = scenario.codex.clone();
    for run in &mut runs {
        for event in &mut run.events {
            match &mut event.kind {
                EventKind::Stdout(line) => *line = line.replace("<cwd>", in_json),
                EventKind::Stderr(line) => *line = line.replace("<cwd>", &raw),
                EventKind::Write { .. }
                | EventKind::Delete { .. }
                | EventKind::Sent(_)
                | EventKind::Recv(_) => {}
            }
        }
    }
    runs
}

/// The recorded app-server processes with `<cwd>` and `<playback>` replaced (in messages, as
/// JSON string contents), so what Codex says and what acplb is expected to send are about the
/// replay's workspace.
fn app_servers_for(scenario: &Scenario, cwd: &Path, playback: &Path) -> Vec<crate::scenario::AppServerRun> {
    let in_json = |s: &str| {
        let quoted = serde_json::Value::String(s.to_owned()).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let (cwd, playback) = (cwd.display().to_string(), playback.display().to_string());
    let (cwd_json, playback_json) = (in_json(&cwd), in_json(&playback));
    let mut servers = scenario.app_servers.clone();
    let events = servers.iter_mut().flat_map(|s| {
        s.events
            .iter_mut()
            .chain(s.turns.iter_mut().flat_map(|t| &mut t.events))
    });
    for event in events {
        match &mut event.kind {
            EventKind::Sent(line) | EventKind::Recv(line) => {
                *line = line
                    .replace("<cwd>", &cwd_json)
                    .replace("<playback>", &playback_json);
            }
            EventKind::Stderr(line) => *line = line.replace("<cwd>", &cwd),
            _ => {}
        }
    }
    servers
}

fn write_workspace(scenario: &Scenario, cwd: &Path) -> Result<(), PlaybackError> {
    for (relative, text) in &scenario.workspace.files {
        let path = cwd.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(PlaybackError::io(parent))?;
        }
        std::fs::write(&path, text).map_err(PlaybackError::io(&path))?;
    }
    if scenario.workspace.git {
        git(cwd, &["init", "-q"])?;
        if !scenario.workspace.files.is_empty() {
            git(cwd, &["add", "-A"])?;
            git(cwd, &["commit", "-q", "-m", "playback workspace"])?;
        }
    }
    Ok(())
}

/// Runs git with a fixed identity and no signing, whatever the user's git config says.
fn git(repo: &Path, args: &[&str]) -> Result<(), PlaybackError> {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=playback",
            "-c",
            "user.email=playback@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| PlaybackError::Spawn {
            program: "git".into(),
            source,
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(PlaybackError::Session(format!(
            "`git {}` failed in the replay workspace: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}
