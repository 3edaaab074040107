//! Replays of scenarios recorded on `codex app-server`: the stand-in answers acplb's JSON-RPC
//! as the recorded server did; a changed recording shows as a diff, a changed answer to one of
//! Codex's requests as a note naming it.

use acplb_playback::scenario::{EventKind, Scenario, Transport, toml_out};
use serde_json::Value;

use crate::bins::{corpus_dir, playback, text};

fn corpus(name: &str) -> Scenario {
    Scenario::load(&corpus_dir().join(format!("{name}.toml"))).unwrap()
}

/// Writes `scenario` into a temporary folder; returns the folder and the file.
fn write(scenario: &Scenario) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{}.toml", scenario.name));
    std::fs::write(&path, toml_out::to_toml(scenario)).unwrap();
    (dir, path)
}

/// The turn events of every process, mutably.
fn turn_events(scenario: &mut Scenario) -> impl Iterator<Item = &mut EventKind> {
    scenario
        .app_servers
        .iter_mut()
        .flat_map(|s| s.turns.iter_mut())
        .flat_map(|t| t.events.iter_mut())
        .map(|e| &mut e.kind)
}

#[test]
fn app_server_scenarios_run_and_check_with_their_transport() {
    for name in ["as-steer", "as-crash"] {
        let scenario = corpus(name);
        assert_eq!(scenario.transport, Transport::AppServer);
        let file = corpus_dir().join(format!("{name}.toml"));
        let output = playback(&["run", file.to_str().unwrap()]);
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{name}: {stderr}");
        assert_eq!(
            stdout.lines().collect::<Vec<_>>(),
            scenario.expect,
            "{name}: {stderr}"
        );
        assert!(
            stdout.contains(r#"{"app_server":1,"argv":["app-server""#),
            "{stdout}"
        );
    }
    // The crash: the first server died mid-turn, a second one resumed the thread.
    let crash = corpus("as-crash");
    assert_eq!(crash.app_servers.len(), 2);
    assert!(
        crash
            .expect
            .iter()
            .any(|l| l.contains(r#""method":"thread/resume""#)),
        "{:#?}",
        crash.expect
    );
    assert!(
        crash
            .expect
            .iter()
            .any(|l| l.contains("exited before the turn finished")),
        "{:#?}",
        crash.expect
    );
}

#[test]
fn a_changed_recording_fails_check_with_a_diff() {
    let mut scenario = corpus("as-plain");
    let mut changed = false;
    for kind in turn_events(&mut scenario) {
        if let EventKind::Recv(line) = kind
            && line.contains(r#""method":"item/agentMessage/delta""#)
        {
            *line = line.replace("mock model", "tampered model");
            changed = true;
        }
    }
    assert!(changed, "as-plain streams its answer as deltas");
    let (_dir, path) = write(&scenario);
    let output = playback(&["check", path.to_str().unwrap()]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAILED"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with('+') && l.contains("tampered model")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with('-') && l.contains("mock model")),
        "{stdout}"
    );
}

#[test]
fn an_answer_that_differs_from_the_recorded_decision_is_reported() {
    let mut scenario = corpus("as-approval-declined");
    let mut changed = None;
    for kind in turn_events(&mut scenario) {
        if let EventKind::Sent(line) = kind {
            let mut msg: Value = serde_json::from_str(line).unwrap();
            if msg.get("method").is_none() && msg.get("id").is_some() {
                let id = msg["id"].clone();
                msg = serde_json::json!({ "id": id, "result": { "decision": "acceptForSession" } });
                *line = msg.to_string();
                changed = Some(id);
                break;
            }
        }
    }
    let id = changed.expect("the scenario holds acplb's answer to Codex's approval request");
    let (_dir, path) = write(&scenario);
    let output = playback(&["run", path.to_str().unwrap()]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "acplb answered Codex's `item/commandExecution/requestApproval` (id {id})"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"but the recording answered result {"decision":"acceptForSession"}"#),
        "{stderr}"
    );
    // Blessing refuses: the recorded Codex side no longer fits.
    let bless = playback(&["check", "--bless", path.to_str().unwrap()]);
    let (stdout, _) = text(&bless);
    assert_eq!(bless.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("not blessed: the replay did not go as recorded"),
        "{stdout}"
    );
}
