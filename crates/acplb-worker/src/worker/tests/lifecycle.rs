//! A worker's life: a crashed run restarted after a doubling pause (then `failed`, then
//! restarted on request), a stop while a turn runs, a reload that touches only what changed.

use std::time::Duration;

use super::stand_in::{StandIn, settings};
use super::{local, until};
use crate::config::{Policy, WorkerSettings};
use crate::daemon::{self, Event};
use crate::status::WorkerState;
use crate::worker::WorkerHandle;

#[tokio::test(start_paused = true)]
async fn a_crashed_run_restarts_after_a_doubling_pause_until_it_is_failed() {
    local(async {
        let host = StandIn::new();
        host.script.fall_sick("codex is gone");
        let settings = WorkerSettings {
            health_check_interval: Duration::from_secs(1),
            restart_backoff: Duration::from_secs(5),
            max_restart_attempts: 2,
            ..settings()
        };
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Queue), settings, host.clone());
        until("bob is failed", || bob.status().state == WorkerState::Failed).await;
        let status = bob.status();
        assert_eq!(status.restarts, 2);
        assert_eq!(status.last_error.as_deref(), Some("health check: codex is gone"));
        let starts: Vec<_> = host.starts.borrow().iter().map(|(_, at)| *at).collect();
        assert_eq!(starts.len(), 3, "the first run and two restarts");
        // Each run fails at its first health check (1 s), then waits 5 s, then 10 s.
        assert_eq!(starts[1] - starts[0], Duration::from_secs(6));
        assert_eq!(starts[2] - starts[1], Duration::from_secs(11));
        // `acplb worker restart` brings it back, with the count of failures reset.
        host.script.get_well();
        bob.restart();
        until("bob is idle again", || bob.status().state == WorkerState::Idle).await;
        assert_eq!(host.started("bob"), 4);
        bob.stop().await;
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_host_that_cannot_start_the_worker_is_retried_after_the_pause() {
    local(async {
        let host = StandIn::new();
        host.failing_starts.set(1);
        let settings = WorkerSettings {
            restart_backoff: Duration::from_secs(5),
            ..settings()
        };
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Queue), settings, host.clone());
        until("bob is idle", || bob.status().state == WorkerState::Idle).await;
        let status = bob.status();
        assert_eq!(status.restarts, 1);
        assert_eq!(status.last_error.as_deref(), Some("bob cannot start (scripted)"));
        let starts: Vec<_> = host.starts.borrow().iter().map(|(_, at)| *at).collect();
        assert_eq!(starts[1] - starts[0], Duration::from_secs(5));
        bob.stop().await;
    })
    .await;
}

#[tokio::test]
async fn a_turn_whose_codex_exited_restarts_the_run_and_a_failed_turn_is_answered() {
    local(async {
        let host = StandIn::new();
        let settings = WorkerSettings {
            restart_backoff: Duration::from_secs(3600),
            ..settings()
        };
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Queue), settings, host.clone());
        until("bob is idle", || bob.status().state == WorkerState::Idle).await;
        // A failed turn (reason `turn_failed`): Codex runs on, the sender hears why.
        host.teammate("alice").send("bob", "broken", None).unwrap();
        until("alice is answered", || !host.mail("alice", "bob").is_empty()).await;
        let (reply, _) = &host.mail("alice", "bob")[0];
        assert!(reply.contains("the model refused"), "{reply}");
        assert_eq!(bob.status().restarts, 0);
        // Codex gone mid-turn (reason `provider_exited`): the run ends as a crash, the mail
        // stays unread for the next run.
        host.teammate("carol").send("bob", "crash", None).unwrap();
        until("bob's run crashed", || bob.status().restarts == 1).await;
        let status = bob.status();
        let last = status.last_error.as_deref().unwrap_or_default();
        assert!(last.contains("exited before the turn finished"), "{last}");
        assert!(host.mail("carol", "bob").is_empty(), "no reply to the crash");
        assert_eq!(host.mail("bob", "carol"), [("crash".to_owned(), false)]);
        bob.stop().await;
    })
    .await;
}

#[tokio::test]
async fn a_stop_while_a_turn_runs_cancels_it_and_leaves_the_mail_unread() {
    local(async {
        let host = StandIn::new();
        host.script.gate("long");
        let bob = WorkerHandle::spawn(host.agent("bob", Policy::Queue), settings(), host.clone());
        host.teammate("alice").send("bob", "long", None).unwrap();
        until("the turn runs", || host.script.count("bob start long") == 1).await;
        let status = bob.status.clone();
        tokio::time::timeout(Duration::from_secs(10), bob.stop())
            .await
            .expect("the stop does not wait for the turn");
        assert_eq!(status.borrow().state, WorkerState::Stopped);
        assert_eq!(
            host.script.count("bob cancelled long"),
            1,
            "{:?}",
            host.script.log()
        );
        assert_eq!(host.script.count("bob shutdown"), 1, "{:?}", host.script.log());
        assert!(host.mail("alice", "bob").is_empty(), "no reply");
        assert_eq!(host.mail("bob", "alice"), [("long".to_owned(), false)]);
    })
    .await;
}

#[tokio::test]
async fn a_reload_stops_starts_and_restarts_only_the_agents_that_changed() {
    local(async {
        let host = StandIn::new();
        let dir = host.dir.path().display().to_string();
        let agents = |entries: &[(&str, &str)]| {
            let text: String = std::iter::once("[workers]\nhealth_check_interval_secs = 3600\n".to_owned())
                .chain(entries.iter().map(|(name, extra)| {
                    format!("[workers.agents.\"{name}@demo\"]\ncwd = \"{dir}\"\n{extra}\n")
                }))
                .collect();
            crate::config::parse(&text, std::path::Path::new("workers.toml"), &|_| false).unwrap()
        };
        let first = agents(&[("bob", ""), ("carol", ""), ("dave", "")]);
        let next = agents(&[
            ("bob", ""),
            ("carol", "prompt_template = \"carol: {message}\""),
            ("erin", ""),
        ]);
        let (events, rx) = tokio::sync::mpsc::unbounded_channel();
        let reloaded = std::cell::Cell::new(Some(next));
        let daemon = tokio::task::spawn_local(daemon::run(
            host.clone(),
            host.dir.path().join("workers.toml"),
            first,
            move || reloaded.take().ok_or_else(|| "reloaded twice".to_owned()),
            rx,
        ));
        let script = host.script.clone();
        until("three workers opened", || {
            ["bob open", "carol open", "dave open"]
                .iter()
                .all(|e| script.count(e) == 1)
        })
        .await;
        events.send(Event::Reload).unwrap();
        until("the new configuration applied", || {
            script.count("erin open") == 1 && script.count("carol open") == 2
        })
        .await;
        assert_eq!(script.count("dave shutdown"), 1, "removed: {:?}", script.log());
        assert_eq!(script.count("carol shutdown"), 1, "changed: {:?}", script.log());
        assert_eq!(script.count("bob shutdown"), 0, "unchanged: {:?}", script.log());
        assert_eq!(
            [
                host.started("bob"),
                host.started("carol"),
                host.started("dave"),
                host.started("erin")
            ],
            [1, 2, 1, 1]
        );
        events.send(Event::Stop).unwrap();
        daemon.await.unwrap().unwrap();
        for name in ["bob", "carol", "erin"] {
            assert!(
                script.count(&format!("{name} shutdown")) >= 1,
                "{name} stopped: {:?}",
                script.log()
            );
        }
    })
    .await;
}
