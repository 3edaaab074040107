//! Bad configurations and collisions: clear errors, nothing started half-way.

use super::rig::Rig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_config_stops_the_daemon_with_file_and_line() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "concurrency_policy = \"sometimes\""));
    rig.start();
    let (code, _) = rig.daemon().wait_exit(super::rig::PATIENCE).await;
    assert_eq!(code, Some(2));
    // The pipe is drained by a task of its own: give it the moment it needs.
    let said = |e: &str| e.contains("workers.toml:10") && e.contains("sometimes") && e.contains("queue");
    crate::harness::eventually(super::rig::PATIENCE, || said(&rig.stderr())).await;
    assert!(said(&rig.stderr()), "{}", rig.stderr());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_without_a_daemon_says_so() {
    let rig = Rig::new();
    let (code, _, err) = rig.acplb(&["worker", "status"]);
    assert_eq!(code, 2);
    assert!(err.contains("no worker daemon is running"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_held_elsewhere_is_an_error_not_a_suffix() {
    let mut rig = Rig::new();
    // Another live process (this test) holds bob's identity lock.
    let sessions = rig.atm_home().join(".config/atm/agent-sessions/demo");
    let _held = acplb_atm::identity::IdentityClaim::acquire(&sessions, "bob", "test").unwrap();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    let bob = rig.wait_state("bob@demo", "failed").await;
    assert!(
        bob["lastError"]
            .as_str()
            .unwrap()
            .contains("held by another live process"),
        "{bob}"
    );
    assert!(!sessions.join("bob-2.lock").exists(), "never a suffixed name");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_daemon_on_the_same_state_dir_is_refused() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    let config = rig.config_path().display().to_string();
    // `--config PATH` names the file, as `--workers-config` does.
    let (code, _, err) = rig.acplb(&["worker", "--config", &config]);
    assert_eq!(code, 2);
    assert!(err.contains("already running"), "{err}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_the_control_socket_and_in_the_inbox_breaks_nothing() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    // A request that is not one, then bytes that are not UTF-8: each gets an error answer.
    let socket = rig.state_dir().join("workers/control.sock");
    for junk in [&b"{\"op\":\"explode\"}\n"[..], &b"\xff\xfe\n"[..]] {
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        stream.write_all(junk).unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(answer.contains("\"result\":\"error\""), "{answer}");
    }
    // A damaged inbox: the worker says so in its log and stays up.
    let inbox = rig.atm_home().join(".claude/teams/demo/inboxes/bob.json");
    std::fs::write(&inbox, b"[{\"from\": \"alice\", \"text\": ").unwrap();
    assert!(
        crate::harness::eventually(super::rig::PATIENCE, || rig
            .stderr()
            .contains("cannot read the inbox"))
        .await,
        "{}",
        rig.stderr()
    );
    let bob = rig.wait_state("bob@demo", "idle").await;
    assert_eq!(bob["restarts"], 0, "{bob}");
    // Repaired: mail flows again.
    std::fs::remove_file(&inbox).unwrap();
    rig.teammate("alice")
        .send("bob", "fixed scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 1).await;
    rig.stop().await;
}
