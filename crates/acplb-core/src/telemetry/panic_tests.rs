//! The hook in a real process: this test binary runs itself again as the child that panics.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// Set in the child: what it does before it panics.
const CHILD: &str = "ACPLB_PANIC_HOOK_TEST_CHILD";

/// The child's side of both tests below (does nothing in a normal run).
#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else { return };
    install_panic_hook();
    if mode == "stuck-stderr" {
        fill_stderr();
    }
    panic!("the test's own panic");
}

/// Fills the stderr pipe (which the parent never reads) so that the next write would wait.
fn fill_stderr() {
    // SAFETY: fcntl and ioctl on descriptor 2 with integer arguments.
    #[expect(unsafe_code, reason = "the pipe's size and fill level have no safe wrapper")]
    let (size, filled) = unsafe {
        let size = libc::fcntl(2, libc::F_GETPIPE_SZ);
        (size, move || {
            let mut n: libc::c_int = 0;
            libc::ioctl(2, libc::FIONREAD, &mut n);
            n
        })
    };
    assert!(size > 0, "stderr is a pipe");
    std::thread::spawn(|| {
        let block = vec![b'.'; 4096];
        loop {
            std::io::stderr().write_all(&block).ok();
        }
    });
    while filled() < size {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn run_child(mode: &str, stderr: Stdio) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "telemetry::panic::tests::child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, mode)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

#[test]
fn a_panic_ends_the_process_with_status_101_and_says_what_it_means_for_sessions() {
    let out = run_child("plain", Stdio::piped()).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(PANIC_EXIT_STATUS), "{stderr}");
    assert!(stderr.contains("internal error, a bug in acplb"), "{stderr}");
    assert!(stderr.contains("the test's own panic"), "{stderr}");
    assert!(stderr.contains("panic_tests.rs:"), "the place is named: {stderr}");
    assert!(stderr.contains("session/load"), "{stderr}");
}

#[test]
fn a_stderr_nobody_reads_does_not_keep_a_panicked_acplb_alive() {
    let mut child = run_child("stuck-stderr", Stdio::piped());
    // The pipe is never read; the child must still end by itself.
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the panicked child was still running after 30 s with a full stderr");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(PANIC_EXIT_STATUS));
}
