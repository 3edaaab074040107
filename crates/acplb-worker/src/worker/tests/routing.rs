//! Mail routed by the agent's policy: `queue` one at a time in order, `reject` answers "busy"
//! at once, `concurrent` side by side up to `max_concurrent`.

use super::stand_in::{StandIn, settings};
use super::{local, until};
use crate::config::Policy;
use crate::status::WorkerState;
use crate::worker::WorkerHandle;

#[tokio::test]
async fn queue_runs_mail_one_at_a_time_in_order() {
    local(async {
        let host = StandIn::new();
        host.script.gate("first");
        let alice = host.teammate("alice");
        alice.send("bob", "first", None).unwrap();
        alice.send("bob", "second", None).unwrap();
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Queue), settings(), host.clone());
        until("bob is busy", || bob.status().state == WorkerState::Busy).await;
        assert_eq!(bob.status().running, 1, "queue runs one turn at a time");
        assert_eq!(
            host.script.count("bob start second"),
            0,
            "{:?}",
            host.script.log()
        );
        host.script.open("first");
        until("both answered", || host.mail("alice", "bob").len() == 2).await;
        let replies: Vec<String> = host.mail("alice", "bob").into_iter().map(|(t, _)| t).collect();
        assert_eq!(replies, ["bob answers first", "bob answers second"]);
        let starts: Vec<String> = host
            .script
            .log()
            .into_iter()
            .filter(|e| e.starts_with("bob start"))
            .collect();
        assert_eq!(starts, ["bob start first", "bob start second"]);
        until("both marked read and counted", || bob.status().answered == 2).await;
        assert_eq!(
            host.mail("bob", "alice"),
            [("first".to_owned(), true), ("second".to_owned(), true)]
        );
        bob.stop().await;
    })
    .await;
}

#[tokio::test]
async fn reject_answers_busy_at_once_and_marks_it_read() {
    local(async {
        let host = StandIn::new();
        host.script.gate("first");
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Reject), settings(), host.clone());
        until("bob is idle", || bob.status().state == WorkerState::Idle).await;
        host.teammate("alice").send("bob", "first", None).unwrap();
        until("bob is busy", || bob.status().state == WorkerState::Busy).await;
        host.teammate("carol").send("bob", "second", None).unwrap();
        until("carol is told bob is busy", || {
            !host.mail("carol", "bob").is_empty()
        })
        .await;
        let (busy, _) = &host.mail("carol", "bob")[0];
        assert!(busy.contains("bob is busy"), "{busy}");
        until("carol's mail is marked read", || {
            host.mail("bob", "carol") == [("second".to_owned(), true)]
        })
        .await;
        assert!(host.mail("alice", "bob").is_empty(), "alice's turn still runs");
        host.script.open("first");
        until("alice answered", || !host.mail("alice", "bob").is_empty()).await;
        assert_eq!(host.mail("alice", "bob")[0].0, "bob answers first");
        assert_eq!(
            host.script.count("bob start second"),
            0,
            "{:?}",
            host.script.log()
        );
        bob.stop().await;
    })
    .await;
}

#[tokio::test]
async fn concurrent_runs_mail_side_by_side_up_to_its_limit() {
    local(async {
        let host = StandIn::new();
        for word in ["first", "second", "third"] {
            host.script.gate(word);
        }
        let alice = host.teammate("alice");
        for word in ["first", "second", "third"] {
            alice.send("bob", word, None).unwrap();
        }
        // `max_concurrent` is 2.
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Concurrent), settings(), host.clone());
        until("two turns run", || {
            host.script.count("bob start first") + host.script.count("bob start second") == 2
        })
        .await;
        assert_eq!(bob.status().running, 2);
        assert_eq!(host.script.count("bob start third"), 0, "{:?}", host.script.log());
        host.script.open("second");
        until("the third starts when a lane is free", || {
            host.script.count("bob start third") == 1
        })
        .await;
        assert_eq!(
            host.mail("alice", "bob"),
            [("bob answers second".to_owned(), false)]
        );
        host.script.open("first");
        host.script.open("third");
        until("all answered", || host.mail("alice", "bob").len() == 3).await;
        // Its own session and one fork.
        assert_eq!(host.script.count("bob open"), 2, "{:?}", host.script.log());
        bob.stop().await;
    })
    .await;
}
