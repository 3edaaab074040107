//! Tests of the worker logs: routing by span, rotation, modes and redaction.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tracing_subscriber::layer::SubscriberExt;

use super::*;

fn files_of(dir: &Path, worker: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(&format!("{worker}.log")))
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn events_go_to_their_workers_file_rotated_and_redacted() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("logs").join("workers");
    let logs = WorkerLogs::new(&dir, 2048, 3).unwrap();
    let errors = logs.error_count();
    let subscriber = tracing_subscriber::registry().with(logs);
    tracing::subscriber::with_default(subscriber, || {
        tracing::info!("outside every worker span");
        let ada = "ada@docs".to_owned();
        let span = tracing::info_span!("worker", worker = %ada);
        let _in = span.enter();
        for n in 0..200 {
            tracing::info!(n, "event number {n:03}");
        }
        {
            let _other = tracing::info_span!("worker", worker = "bob@docs").entered();
            tracing::warn!(key = "sk-proj-abcdefghijklmnop1234", "bob's own line");
        }
        let _nested = tracing::debug_span!("turn", id = 7).entered();
        tracing::info!("the newest line");
    });

    assert_eq!(errors.get(), 0);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&root.path().join("logs")), 0o700);

    let ada = files_of(&dir, "ada@docs");
    assert_eq!(
        ada,
        [
            "ada@docs.log",
            "ada@docs.log.1",
            "ada@docs.log.2",
            "ada@docs.log.3"
        ]
    );
    for name in &ada {
        let path = dir.join(name);
        assert_eq!(mode(&path), 0o600, "{name}");
        assert!(fs::metadata(&path).unwrap().len() <= 2048, "{name}");
    }
    let newest = fs::read_to_string(dir.join("ada@docs.log")).unwrap();
    let last = newest.lines().last().unwrap();
    // The fmt layout: time, level, span context, target, message.
    assert!(
        last.ends_with(
            " INFO worker{worker=ada@docs}:turn{id=7}: acplb_worker::logs::tests: the newest line"
        ),
        "{last}"
    );
    assert!(newest.contains("event number 199 n=199"), "{newest}");
    let oldest = fs::read_to_string(dir.join("ada@docs.log.3")).unwrap();
    assert!(
        !oldest.contains("event number 000"),
        "the oldest lines were pruned"
    );
    assert!(!newest.contains("bob"));

    let bob = fs::read_to_string(dir.join("bob@docs.log")).unwrap();
    assert_eq!(bob.lines().count(), 1, "{bob}");
    // The innermost worker span decides the file.
    assert!(
        bob.contains(r#" WARN worker{worker=ada@docs}:worker{worker="bob@docs"}: "#),
        "{bob}"
    );
    assert!(
        bob.ends_with(
            r#"bob's own line key="[REDACTED]"
"#
        ),
        "{bob}"
    );
    assert!(!bob.contains("sk-proj"), "{bob}");

    let all: Vec<_> = fs::read_dir(&dir).unwrap().collect();
    assert_eq!(
        all.len(),
        ada.len() + 1,
        "no file for events outside worker spans"
    );
    for entry in all {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("outside every worker span"));
    }
}

#[test]
fn a_worker_named_after_the_span_is_created_can_log() {
    let dir = tempfile::tempdir().unwrap();
    let logs = WorkerLogs::new(dir.path(), 1 << 20, 5).unwrap();
    let subscriber = tracing_subscriber::registry().with(logs);
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("worker", worker = tracing::field::Empty);
        let _in = span.enter();
        tracing::info!("before the name");
        span.record(WORKER_FIELD, "cy@ops");
        tracing::info!("after the name");
    });
    let text = fs::read_to_string(dir.path().join("cy@ops.log")).unwrap();
    assert!(
        text.contains("after the name") && !text.contains("before the name"),
        "{text}"
    );
}

#[test]
fn an_unusable_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    fs::write(&file, "").unwrap();
    let err = WorkerLogs::<tracing_subscriber::Registry>::new(&file.join("logs"), 1024, 1).unwrap_err();
    assert!(matches!(err, LogError::CreateDir { .. }), "{err}");
}
