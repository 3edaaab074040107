//! Crashes, restarts, reloads and stops: nothing sent is lost or answered twice.

use std::time::Duration;

use nix::sys::signal::Signal;

use super::rig::{PATIENCE, Rig, text};
use crate::harness::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_killed_mid_turn_restarts_the_worker_and_the_mail_is_answered_once() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "work scenario:slow", None)
        .unwrap();
    // The turn runs its 2 s command: kill every Codex process of the worker.
    assert!(eventually(PATIENCE, || rig.requests_with("work scenario:slow") > 0).await);
    rig.wait_state("bob@demo", "busy").await;
    let victims = rig.codex_processes();
    assert!(!victims.is_empty());
    for pid in &victims {
        let _gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
    let replies = rig.wait_mail("alice", "bob", 1).await;
    assert!(
        text(&replies[0]).starts_with("slow answer"),
        "{}",
        text(&replies[0])
    );
    let bob = rig.wait_state("bob@demo", "idle").await;
    assert!(bob["restarts"].as_u64().unwrap() >= 1, "{bob}");
    // Exactly once, even after more wake-ups.
    rig.teammate("alice")
        .send("bob", "ping scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 2).await;
    assert_eq!(rig.mail_from("alice", "bob").len(), 2);
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_looping_worker_ends_failed_while_another_keeps_answering() {
    let mut rig = Rig::new();
    // Team `ghost` has no folder: carol's start fails every time.
    let carol = format!(
        "[workers.agents.\"carol@ghost\"]\ncwd = \"{}\"\n",
        rig.workspace().display()
    );
    rig.write_config(&format!("{}{carol}", rig.agent("bob", "")));
    rig.start();
    let carol = rig.wait_state("carol@ghost", "failed").await;
    assert_eq!(carol["restarts"], 3, "{carol}");
    assert!(carol["lastError"].as_str().unwrap().contains("ghost"), "{carol}");
    rig.teammate("alice")
        .send("bob", "still there? scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 1).await;
    // `restart` brings it back (to fail again: the team is still missing).
    let (code, out, err) = rig.acplb(&["worker", "restart", "carol@ghost"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("restarting"), "{out}");
    let (code, _, err) = rig.acplb(&["worker", "restart", "nobody@demo"]);
    assert_eq!(code, 2);
    assert!(err.contains("no worker `nobody@demo`"), "{err}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_adds_and_removes_agents_and_refuses_a_bad_file() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    let bob = rig.wait_state("bob@demo", "idle").await;
    rig.write_config(&format!("{}{}", rig.agent("bob", ""), rig.agent("dave", "")));
    rig.signal(Signal::SIGHUP);
    rig.wait_state("dave@demo", "idle").await;
    assert_eq!(
        rig.worker("bob@demo").await["sessionId"],
        bob["sessionId"],
        "bob untouched"
    );
    assert_eq!(rig.worker("bob@demo").await["restarts"], 0);
    rig.teammate("alice")
        .send("dave", "hi dave scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "dave", 1).await;

    rig.write_config(&rig.agent("dave", ""));
    rig.signal(Signal::SIGHUP);
    assert!(
        eventually(PATIENCE, || {
            let (_, out, _) = rig.acplb(&["worker", "status", "--json"]);
            !out.contains("bob@demo") && out.contains("dave@demo")
        })
        .await,
        "bob removed"
    );

    std::fs::write(rig.config_path(), "[workers]\nbogus = 1\n").unwrap();
    rig.signal(Signal::SIGHUP);
    assert!(
        eventually(PATIENCE, || rig.stderr().contains("the old one stays in force")).await,
        "{}",
        rig.stderr()
    );
    assert!(
        rig.stderr().contains("workers.toml:2"),
        "the refusal names the line: {}",
        rig.stderr()
    );
    rig.wait_state("dave@demo", "idle").await;
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_turn_leaves_no_process_and_the_mail_unread() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "never mind scenario:hang", None)
        .unwrap();
    assert!(eventually(PATIENCE, || rig.requests_with("never mind scenario:hang") > 0).await);
    rig.wait_state("bob@demo", "busy").await;
    let (code, took) = rig.stop().await;
    assert_eq!(code, Some(0), "{}", rig.stderr());
    assert!(
        took < Duration::from_secs(15),
        "within the shutdown timeout: {took:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || rig.codex_processes().is_empty()).await,
        "{:?}",
        rig.codex_processes()
    );
    assert!(rig.mail_from("alice", "bob").is_empty(), "no reply");
    assert_eq!(
        rig.inbox("bob")[0]["read"],
        false,
        "left unread for the next start"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_codex_fails_the_health_check_and_the_worker_restarts() {
    if crate::harness::transport() == "exec" {
        // Nothing of Codex runs between exec turns; a hung exec turn ends at the turn limit.
        return;
    }
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", ""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "warm up scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 1).await;
    // Freeze bob's app-server: alive, but answering nothing.
    let frozen = rig.codex_processes();
    assert!(!frozen.is_empty());
    // A process listed a moment ago may have ended since (ESRCH): it needs no freezing.
    let mut stopped = 0;
    for pid in &frozen {
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), Signal::SIGSTOP) {
            Ok(()) => stopped += 1,
            Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => panic!("SIGSTOP {pid}: {e}"),
        }
    }
    assert!(
        stopped > 0,
        "none of bob's Codex processes was left to freeze: {frozen:?}"
    );
    let start = std::time::Instant::now();
    loop {
        let bob = rig.worker("bob@demo").await;
        if bob["restarts"].as_u64() >= Some(1) {
            assert!(
                bob["lastError"].as_str().unwrap().contains("health check"),
                "{bob}"
            );
            break;
        }
        assert!(start.elapsed() < PATIENCE, "no restart: {bob}\n{}", rig.stderr());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    rig.teammate("alice")
        .send("bob", "back? scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 2).await;
    assert!(
        eventually(Duration::from_secs(10), || frozen
            .iter()
            .all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()
                || std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .is_ok_and(|s| s.contains(") Z "))))
        .await,
        "the frozen Codex was killed"
    );
    rig.stop().await;
}
