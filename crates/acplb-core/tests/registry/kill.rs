//! A writer killed with SIGKILL in the middle of its writes leaves a valid registry file and
//! no lock behind.

use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::child;

const KEY: &str = "_local";

#[test]
fn a_writer_killed_mid_write_leaves_a_valid_file_and_a_free_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let mut writer = child::spawn("kill::child_writes_forever", 0, &state);
    let reg = child::patient(&state);
    let file = reg.file(KEY);
    let deadline = Instant::now() + Duration::from_secs(60);
    // Wait until it has written a few dozen entries (it never stops on its own).
    while !file.exists() || child::version_and_count(&file).0 < 30 {
        assert!(Instant::now() < deadline, "the writer wrote too little in 60 s");
        assert!(
            writer.try_wait().unwrap().is_none(),
            "the writer stopped by itself"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    kill(Pid::from_raw(writer.id().cast_signed()), Signal::SIGKILL).unwrap();
    let status = writer.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));

    // Every write adds one session: the file holds exactly as many as its version says.
    let (version, count) = child::version_and_count(&file);
    assert!(version >= 30);
    assert_eq!(usize::try_from(version).unwrap(), count);
    let listing = reg.all().unwrap();
    assert!(listing.problems.is_empty(), "{:?}", listing.problems);
    assert_eq!(listing.entries.len(), count);

    // The kernel dropped the dead writer's lock: a writer that waits at most 2 s gets it.
    let quick = acplb_core::sessions::registry::Registry::new(&state).with_lock_wait(Duration::from_secs(2));
    quick
        .update(KEY, "after", |_| Some(child::entry("after", "/w", 0)))
        .unwrap();
    assert_eq!(child::version_and_count(&file), (version + 1, count + 1));
}

/// Child: adds one session per update until it is killed.
#[test]
fn child_writes_forever() {
    let Some((_, state)) = child::role() else { return };
    let reg = child::patient(&state);
    for n in 0u64.. {
        let id = format!("k-{n}");
        reg.update(KEY, &id, |_| Some(child::entry(&id, "/w", n)))
            .unwrap();
    }
}
