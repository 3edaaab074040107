//! The router's policies: `queue` keeps order, `reject` answers "busy" at once, `concurrent`
//! runs turns side by side on separate Codex threads, never more than `max_concurrent`.

use std::collections::BTreeSet;

use super::rig::{PATIENCE, Rig, text};
use crate::harness::eventually;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_answers_one_at_a_time_in_order() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "concurrency_policy = \"queue\""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    let alice = rig.teammate("alice");
    alice.send("bob", "first scenario:slow", None).unwrap();
    alice.send("bob", "second scenario:answer", None).unwrap();
    alice.send("bob", "third scenario:answer", None).unwrap();
    let replies = rig.wait_mail("alice", "bob", 3).await;
    let texts: Vec<String> = replies.iter().map(text).collect();
    assert!(texts[0].starts_with("slow answer"), "{texts:?}");
    assert_eq!(texts[1], "bob here: answered turn 2");
    assert_eq!(texts[2], "bob here: answered turn 3");
    // One thread, so one turn at a time.
    let threads: BTreeSet<String> = rig
        .mock
        .requests()
        .iter()
        .filter_map(|r| r.header("thread-id").map(str::to_owned))
        .collect();
    assert_eq!(threads.len(), 1, "{threads:?}");
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_answers_busy_at_once_and_marks_it_read() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "concurrency_policy = \"reject\""));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    rig.teammate("alice")
        .send("bob", "long job scenario:slow", None)
        .unwrap();
    rig.wait_state("bob@demo", "busy").await;
    rig.teammate("carol")
        .send("bob", "me too scenario:answer", None)
        .unwrap();
    let busy = rig.wait_mail("carol", "bob", 1).await;
    assert!(text(&busy[0]).contains("busy"), "{}", text(&busy[0]));
    // The busy answer came while the long job still ran.
    assert!(
        rig.mail_from("alice", "bob").is_empty(),
        "carol's answer came before alice's"
    );
    let done = rig.wait_mail("alice", "bob", 1).await;
    assert!(text(&done[0]).starts_with("slow answer"));
    assert!(eventually(PATIENCE, || rig.inbox("bob").iter().all(|r| r["read"] == true)).await);
    assert_eq!(
        rig.requests_with("me too"),
        0,
        "the rejected mail never reached the model"
    );
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_runs_turns_side_by_side_capped() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "concurrency_policy = \"concurrent\"\nmax_concurrent = 2"));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    let alice = rig.teammate("alice");
    for n in 1..=4 {
        alice
            .send("bob", &format!("job {n} scenario:slow"), None)
            .unwrap();
    }
    // Two turns run at once: both reach the model before either is answered.
    let both = eventually(PATIENCE, || {
        let jobs = (1..=4)
            .filter(|n| rig.requests_with(&format!("job {n} scenario:slow")) > 0)
            .count();
        jobs >= 2
    })
    .await;
    assert!(both, "{}", rig.stderr());
    assert!(
        rig.mail_from("alice", "bob").is_empty(),
        "no answer yet while two run"
    );
    let running = rig.worker("bob@demo").await["running"].as_u64().unwrap();
    assert!(running <= 2, "at most max_concurrent turns: {running}");
    let replies = rig.wait_mail("alice", "bob", 4).await;
    assert_eq!(replies.len(), 4);
    let threads: BTreeSet<String> = rig
        .mock
        .requests()
        .iter()
        .filter_map(|r| r.header("thread-id").map(str::to_owned))
        .collect();
    assert_eq!(threads.len(), 2, "two Codex threads, never more: {threads:?}");
    rig.stop().await;
}
