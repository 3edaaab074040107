//! Input queues holding things that are not message files: a directory, a FIFO and a symlink
//! named like messages never stop delivery nor hang `acplb queue list`; each is set aside as
//! `<id>.bad`.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::harness::{eventually, open_session, prompt};
use crate::queue_delivery::{HELD, files, live, notices, requests_with, send};

/// Ids of the poison entries [`plant`] makes, oldest first.
pub const POISON: [&str; 3] = [
    "0190c5d0-0000-4000-8000-00000000d1d1",
    "0190c5d0-0000-4000-8000-00000000f1f0",
    "0190c5d0-0000-4000-8000-00000000511c",
];

/// Puts into the queue folder `dir` a directory, a FIFO and a symlink to a valid message file
/// outside the queue, each named like a waiting message. Each is made in a staging folder beside
/// the queue and renamed in whole, since a live consumer may set an entry aside the moment it
/// appears.
pub fn plant(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let outer = dir.parent().unwrap().parent().unwrap();
    let staging = outer.join(format!("staging-{}", std::process::id()));
    std::fs::create_dir_all(&staging).unwrap();
    let folder = staging.join(format!("{}.json", POISON[0]));
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("inside"), "x").unwrap();
    nix::unistd::mkfifo(
        &staging.join(format!("{}.json", POISON[1])),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let outside = outer.join("elsewhere.json");
    let message = format!(
        r#"{{"id":"{}","text":"SYMLINKED-TOKEN","sentAt":"2026-01-01T00:00:00.000Z"}}"#,
        POISON[2]
    );
    std::fs::write(&outside, message).unwrap();
    std::os::unix::fs::symlink(&outside, staging.join(format!("{}.json", POISON[2]))).unwrap();
    for id in POISON {
        let name = format!("{id}.json");
        std::fs::rename(staging.join(&name), dir.join(&name)).unwrap();
    }
    std::fs::remove_dir(&staging).unwrap();
}

/// Whether every poison entry of [`plant`] was set aside as `<id>.bad`.
pub fn set_aside(dir: &Path) -> bool {
    let names = files(dir);
    POISON
        .iter()
        .all(|id| names.contains(&format!("{id}.bad")) && !names.contains(&format!("{id}.json")))
}

/// `acplb queue list TARGET --json`, killed after `limit`: exit code, stdout, stderr, or `None`
/// when it had to be killed.
pub fn list_within(state: &Path, target: &str, limit: Duration) -> Option<(i32, String, String)> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_acplb"))
        .args(["queue", "list", target, "--json"])
        .env("ACPLB_STATE_DIR", state)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_a_fifo_and_a_symlink_in_a_sessions_queue_are_set_aside() {
    let mut live = live();
    let ws = live.workspace();
    let state = live.state_dir();
    let updates = live.updates.clone();
    let watch = live.updates.clone();
    let mock = &live.mock;
    live.acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let target = s.session_id.to_string();
            let dir = state.join("queue").join(&target);
            plant(&dir);
            // Listed without hanging on the FIFO or failing on the folder; none is a message.
            let (code, out, err) =
                list_within(&state, &target, Duration::from_secs(10)).expect("`queue list` hung");
            assert_eq!(code, 0, "{err}");
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(doc["pending"], serde_json::json!([]), "{out}");

            // A message sent after them is delivered all the same.
            send(&state, &target, "AFTER-POISON-TOKEN", "ci@test");
            assert!(
                eventually(Duration::from_secs(30), || notices(&watch, HELD) == 1).await,
                "the message is announced: {:?}\n{:?}",
                watch.json(),
                files(&dir)
            );
            assert!(set_aside(&dir), "{:?}", files(&dir));
            prompt(&cx, &s.session_id, "scenario:plain next").await?;
            assert_eq!(requests_with(mock, "AFTER-POISON-TOKEN"), 1);
            assert_eq!(
                requests_with(mock, "SYMLINKED-TOKEN"),
                0,
                "a symlink is no message"
            );
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    live.acplb.wait_exit(Duration::from_secs(10)).await;
}
