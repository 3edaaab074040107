//! The router's policies: `queue` keeps order, `reject` answers "busy" at once, `concurrent`
//! runs turns side by side on separate Codex threads forked from the worker's own, never more
//! than `max_concurrent`.

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
    let threads = rig.threads();
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
    let threads = rig.threads();
    assert_eq!(threads.len(), 2, "two Codex threads, never more: {threads:?}");
    rig.stop().await;
}

/// The text of the `role` messages of a Responses request's input.
fn texts_of(body: &serde_json::Value, role: &str) -> String {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["role"] == role)
        .map(|item| item["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_lanes_fork_the_workers_own_thread() {
    let mut rig = Rig::new();
    rig.write_config(&rig.agent("bob", "concurrency_policy = \"concurrent\"\nmax_concurrent = 3"));
    rig.start();
    rig.wait_state("bob@demo", "idle").await;
    let alice = rig.teammate("alice");
    alice
        .send("bob", "remember the pelican-7 scenario:answer", None)
        .unwrap();
    rig.wait_mail("alice", "bob", 1).await;
    let main = rig.mock.requests()[0]
        .header("thread-id")
        .expect("requests carry their thread")
        .to_owned();
    for n in 1..=3 {
        alice
            .send("bob", &format!("job {n} scenario:slow"), None)
            .unwrap();
    }
    let replies = rig.wait_mail("alice", "bob", 4).await;
    assert!(
        replies[1..].iter().all(|r| text(r).starts_with("slow answer")),
        "{replies:?}"
    );
    // The first request of every thread but the worker's own: each a lane.
    let mut lanes: Vec<(String, serde_json::Value)> = Vec::new();
    for r in rig.mock.requests() {
        let Some(thread) = r.header("thread-id") else {
            continue;
        };
        if thread != main && !lanes.iter().any(|(t, _)| t == thread) {
            lanes.push((thread.to_owned(), r.body.clone()));
        }
    }
    assert_eq!(
        lanes.len(),
        2,
        "two lanes besides the worker's own thread: {lanes:?}"
    );
    for (thread, body) in &lanes {
        assert_ne!(thread, &main);
        if crate::harness::transport() == "exec" {
            // `codex exec` cannot fork: the lane's new thread starts from a digest.
            let developer = texts_of(body, "developer");
            assert!(developer.contains("(a fork)"), "{developer}");
            assert!(developer.contains("pelican-7"), "{developer}");
        } else {
            // A real fork: the earlier exchange is in the thread's history, no digest.
            let user = texts_of(body, "user");
            assert!(user.contains("remember the pelican-7"), "{user}");
            assert!(!body.to_string().contains("(a fork)"), "{body}");
        }
    }
    rig.stop().await;
}
