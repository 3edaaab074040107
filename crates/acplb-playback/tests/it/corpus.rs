//! The recorded corpus replays byte for byte through the real acplb binary, fast.

use std::time::{Duration, Instant};

use crate::bins::{corpus_dir, playback, text};

#[test]
fn the_whole_corpus_passes_check_in_under_30_seconds() {
    let corpus = corpus_dir();
    let files = std::fs::read_dir(&corpus)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert!(files >= 20, "the corpus has {files} scenarios");
    let app_server = std::fs::read_dir(&corpus)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.starts_with("as-") && name.ends_with(".toml")
        })
        .count();
    assert!(
        app_server >= 15,
        "the corpus has {app_server} app-server scenarios"
    );
    // Built (if need be) before the clock starts.
    crate::bins::acplb();
    let started = Instant::now();
    let output = playback(&["check", corpus.to_str().unwrap()]);
    let elapsed = started.elapsed();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&format!("{files} passed, 0 failed"))),
        "{stdout}"
    );
    assert!(elapsed < Duration::from_secs(30), "check took {elapsed:?}");
}

#[test]
fn run_prints_the_expected_output() {
    let file = corpus_dir().join("cancel-sleep.toml");
    let output = playback(&["run", file.to_str().unwrap()]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let scenario = acplb_playback::scenario::Scenario::load(&file).unwrap();
    assert_eq!(stdout.lines().collect::<Vec<_>>(), scenario.expect, "{stderr}");
    assert!(stdout.contains(r#""stopReason":"cancelled""#), "{stdout}");
}

#[test]
fn run_at_real_speed_keeps_the_recorded_delays() {
    // `retries` waited about two seconds for Codex's reconnect backoff.
    let file = corpus_dir().join("retries.toml");
    let scenario = acplb_playback::scenario::Scenario::load(&file).unwrap();
    let last_event_ms = scenario.codex[0].events.last().unwrap().t_ms;
    let started = Instant::now();
    let output = playback(&["run", "--speed", "real", file.to_str().unwrap()]);
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{}", text(&output).1);
    assert_eq!(text(&output).0.lines().collect::<Vec<_>>(), scenario.expect);
    assert!(
        elapsed >= Duration::from_millis(last_event_ms),
        "{elapsed:?} < {last_event_ms} ms"
    );
}
