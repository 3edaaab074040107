//! `playback record-corpus`: records every corpus scenario from the real Codex CLI. For each one
//! it prepares a Codex home and git workspace pointed at the mock model ([`CodexTestEnv`]),
//! starts `playback record -- acplb …` there, and drives it with the scripted client.
//!
//! The `unknown-event` scenario runs Codex behind a wrapper (playback again, started as `codex`
//! with [`WRAP_CODEX_VAR`] set) that copies Codex's stdout and puts one unknown event line after
//! `turn.started`: the only part of the corpus Codex did not print itself.

mod app_specs;
mod script;
pub mod specs;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::client::{self, Substitutions};
use crate::error::PlaybackError;
use crate::mock_model::codex_env::CodexTestEnv;
use crate::mock_model::{MockConfig, MockModel, Script};
use crate::scenario::Scenario;
pub use specs::Spec;

/// Set on the wrapper: the real Codex binary.
pub const WRAP_CODEX_VAR: &str = "PLAYBACK_WRAP_CODEX";
/// Set on the wrapper: the line to put after `turn.started`.
pub const WRAP_INJECT_VAR: &str = "PLAYBACK_WRAP_INJECT";
/// acplb arguments of every corpus recording: an unreachable model fails fast.
pub const DEFAULT_ACPLB_ARGS: [&str; 2] = ["-c", "features.unbounded_connection_retries=false"];
/// Mock model scenarios only the corpus uses, over the built-in ones.
const CORPUS_MOCK: &str = include_str!("mock.toml");
/// Longest wait for one response while recording (real Codex, real sandbox).
const WAIT: Duration = Duration::from_secs(90);

/// How to record the corpus.
#[derive(Debug, Clone)]
pub struct CorpusOptions {
    /// Where the scenario files go.
    pub out: PathBuf,
    /// Only these scenarios (all when empty).
    pub only: Vec<String>,
    /// Only the scenarios of this transport.
    pub transport: Option<crate::scenario::Transport>,
    /// The acplb binary.
    pub acplb: PathBuf,
    /// The real Codex binary.
    pub codex: PathBuf,
    /// The playback binary (recorder, MCP server, wrapper).
    pub playback: PathBuf,
}

/// Records the selected scenarios; `progress` gets one line per scenario.
pub async fn record_corpus(
    opts: &CorpusOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PathBuf>, PlaybackError> {
    let specs: Vec<Spec> = specs::all()
        .into_iter()
        .filter(|s| opts.only.is_empty() || opts.only.iter().any(|o| o == s.name))
        .filter(|s| opts.transport.is_none_or(|t| t == s.transport))
        .collect();
    if let Some(unknown) = opts
        .only
        .iter()
        .find(|o| !specs.iter().any(|s| s.name == o.as_str()))
    {
        return Err(PlaybackError::Session(format!(
            "no corpus scenario named `{unknown}`"
        )));
    }
    std::fs::create_dir_all(&opts.out).map_err(PlaybackError::io(&opts.out))?;
    // The recorder runs in each scenario's workspace: it needs an absolute path.
    let out = std::fs::canonicalize(&opts.out).map_err(PlaybackError::io(&opts.out))?;
    let script = Script::builtin().layered_with(
        Script::from_toml_str(CORPUS_MOCK, "corpus/mock.toml")
            .map_err(|e| PlaybackError::Session(format!("the corpus's mock scenarios: {e}")))?,
    );
    let mock = MockModel::start(MockConfig::default().with_script(script))
        .map_err(|e| PlaybackError::Session(format!("the mock model did not start: {e}")))?;
    let mut written = Vec::new();
    let mut failed = Vec::new();
    for spec in &specs {
        let path = out.join(format!("{}.toml", spec.name));
        let env = CodexTestEnv::new(mock.base_url())
            .map_err(|e| PlaybackError::Session(format!("{}: {e}", spec.name)))?;
        // One scenario that cannot be recorded (yet) does not stop the others.
        match record_one(spec, &env, &path, opts).await {
            Ok(scenario) => {
                progress(&format!(
                    "recorded {} ({} codex run(s), {} app-server process(es), {} output lines)",
                    path.display(),
                    scenario.codex.len(),
                    scenario.app_servers.len(),
                    scenario.expect.len()
                ));
                written.push(path);
            }
            Err(e) => {
                progress(&format!("FAILED {}: {e}", spec.name));
                failed.push(spec.name);
            }
        }
    }
    mock.shutdown();
    if !failed.is_empty() {
        return Err(PlaybackError::Session(format!(
            "{} scenario(s) not recorded: {}",
            failed.len(),
            failed.join(", ")
        )));
    }
    Ok(written)
}

async fn record_one(
    spec: &Spec,
    env: &CodexTestEnv,
    path: &Path,
    opts: &CorpusOptions,
) -> Result<Scenario, PlaybackError> {
    let mut command = tokio::process::Command::new(&opts.playback);
    command
        .arg("record")
        .arg("-o")
        .arg(path)
        .args(["--name", spec.name, "--description", spec.description, "--"])
        .arg(&opts.acplb)
        .args(DEFAULT_ACPLB_ARGS)
        .args(&spec.acplb_args)
        .envs(env.env_vars())
        // A home of its own keeps the user's shell profile out of Codex's `bash -lc` output.
        .env("HOME", env.root())
        .env("RUST_LOG", "error")
        .env("ACPLB_TRANSPORT", spec.transport.as_str())
        .current_dir(env.workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    match spec.inject {
        Some(line) => {
            let wrapper = env.root().join("wrap").join("codex");
            let dir = env.root().join("wrap");
            std::fs::create_dir_all(&dir).map_err(PlaybackError::io(&dir))?;
            std::os::unix::fs::symlink(&opts.playback, &wrapper).map_err(PlaybackError::io(&wrapper))?;
            command
                .env("ACPLB_CODEX", &wrapper)
                .env(WRAP_CODEX_VAR, &opts.codex)
                .env(WRAP_INJECT_VAR, line);
        }
        None => {
            command.env("ACPLB_CODEX", &opts.codex);
        }
    }
    let mut child = command.spawn().map_err(|source| PlaybackError::Spawn {
        program: opts.playback.clone(),
        source,
    })?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(PlaybackError::Session(
            "the recorder's stdio was not piped".to_owned(),
        ));
    };
    let subst = Substitutions {
        cwd: env.workspace().display().to_string(),
        playback: opts.playback.display().to_string(),
    };
    let run = client::drive(&spec.steps, &spec.answers, &subst, stdin, stdout, WAIT).await;
    let status = child
        .wait()
        .await
        .map_err(PlaybackError::process("waiting for the recorder"))?;
    if let Some(error) = run.error {
        // What the recorder wrote is not the scenario the spec describes.
        if let Err(e) = std::fs::remove_file(path) {
            tracing::debug!(error = %e, "no half-recorded scenario to remove");
        }
        return Err(PlaybackError::Session(format!("{}: {error}", spec.name)));
    }
    if !status.success() {
        return Err(PlaybackError::Session(format!(
            "{}: `playback record` failed ({status})",
            spec.name
        )));
    }
    Scenario::load(path)
}

/// The wrapper's copy loop: Codex's stdout lines to `out`, with `inject` after the first
/// `turn.started` line.
pub fn relay<R: BufRead, W: Write>(codex_stdout: R, mut out: W, inject: &str) -> std::io::Result<()> {
    let mut injected = false;
    for line in codex_stdout.lines() {
        let line = line?;
        writeln!(out, "{line}")?;
        if !injected && line.contains(r#""type":"turn.started""#) {
            writeln!(out, "{inject}")?;
            injected = true;
        }
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_injects_after_turn_started_once() {
        let input =
            "{\"type\":\"thread.started\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"turn.started\"}\n";
        let mut out = Vec::new();
        relay(input.as_bytes(), &mut out, "X").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"type\":\"thread.started\"}\n{\"type\":\"turn.started\"}\nX\n{\"type\":\"turn.started\"}\n"
        );
    }

    #[test]
    fn corpus_names_are_unique_and_enough() {
        let specs = specs::all();
        let mut names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        assert!(specs.len() >= 20);
    }
}
