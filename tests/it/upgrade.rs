//! A Codex upgraded on disk while acplb runs: the next turn runs the new Codex, in the same
//! conversation. On app-server the warm server, idle between turns, is replaced (and the
//! session's thread resumed on the new one); on exec every turn starts Codex anew anyway.
//!
//! The test's Codex is a launcher file that starts the pinned Codex; the upgrade writes a new
//! launcher and renames it over the old one, as package managers do, and the new one leaves a
//! mark when it runs. `acplb doctor` lists the running server with its version.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use acplb_playback::mock_model::MockConfig;
use acplb_playback::mock_model::codex_env::codex_binary;

use crate::harness::{open_session, processes_with_env, prompt};
use crate::live::{Live, assert_end_turn};

/// Writes (by rename, as an upgrade does) a launcher at `path` that starts the pinned Codex,
/// first touching `mark` when one is given.
pub fn write_launcher(path: &Path, mark: Option<&Path>) {
    let codex = codex_binary().expect("the pinned Codex");
    let touch = mark.map_or(String::new(), |m| format!(": > '{}'\n", m.display()));
    let text = format!("#!/bin/sh\n{touch}exec '{}' \"$@\"\n", codex.display());
    let new = path.with_extension("new");
    std::fs::write(&new, text).unwrap();
    std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&new, path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_after_a_codex_upgrade_runs_the_new_codex_in_the_same_conversation() {
    let bin = tempfile::tempdir().unwrap();
    let launcher = bin.path().join("codex");
    let mark = bin.path().join("upgraded-codex-ran");
    write_launcher(&launcher, None);
    let env = vec![("ACPLB_CODEX".to_owned(), launcher.display().to_string())];
    let mut live = Live::start_with(MockConfig::default(), &[], &env);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let marker = live.codex_marker();
    let doctor_env = live.env.env_vars();
    let (before, doctor, ours, after) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let before = prompt(&cx, &s.session_id, "remember the word pelican").await?;
            let doctor = tokio::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
                .arg("doctor")
                .envs(doctor_env)
                .env("ACPLB_CODEX", &launcher)
                .output()
                .await
                .expect("acplb doctor runs");
            let ours = processes_with_env(&marker);
            write_launcher(&launcher, Some(&mark));
            let after = prompt(&cx, &s.session_id, "which word was it").await?;
            Ok((before, doctor, ours, after))
        })
        .await
        .unwrap();
    let stderr = live.acplb.stderr();
    assert_end_turn(&before.stop_reason);
    assert_end_turn(&after.stop_reason);
    assert!(mark.exists(), "the second turn ran the new Codex: {stderr}");
    let asked = live.mock.requests();
    let last = serde_json::to_string(&asked.last().unwrap().body).unwrap();
    assert!(
        last.contains("remember the word pelican") && last.contains("which word was it"),
        "the new Codex carried the conversation on: {last}"
    );
    if std::env::var("ACPLB_TRANSPORT").as_deref() != Ok("exec") {
        assert!(
            stderr.contains("codex changed on disk; replacing the idle app-server"),
            "{stderr}"
        );
        assert!(stderr.contains("generation=2"), "{stderr}");
        let doctor = String::from_utf8_lossy(&doctor.stdout);
        assert!(
            ours.iter().any(|pid| doctor.contains(&format!(
                "running:  codex app-server pid {pid}: codex-cli 0.169.0\n"
            ))),
            "doctor lists this test's server ({ours:?}) with its version:\n{doctor}"
        );
    }
}
