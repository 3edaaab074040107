//! `JetBrains` AIR's async tasks (ADR 0051) when things go wrong: a task stopped with
//! `/terminals stop` ends `stopped`; stopping it again or stopping a task nobody knows answers
//! `{stopped: false}` and tells no second end; a task whose Codex server is killed ends
//! `failed` when the session carries on on a new server, right after its call says why.

use std::time::Duration;

use serde_json::{Value, json};

use crate::air::air;
use crate::air_tasks::{live, task_notes};
use crate::background::{command_updates, listed};
use crate::harness::{eventually, prompt};
use crate::live::assert_end_turn;
use crate::vendor::vendor;

/// The `state`s told of the task of call `id`.
fn states(notes: &[Value], id: &str) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| {
            n["update"]["sessionUpdate"] == "async_task_state_update" && n["update"]["toolCallId"] == id
        })
        .map(|n| n["update"]["state"].clone())
        .collect()
}

/// The pid of Codex's own `app-server` process among those carrying `marker`.
fn app_server(marker: &str) -> Option<u32> {
    crate::harness::processes_with_env(marker)
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
                args.get(1) == Some(&b"app-server".as_slice())
            })
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_twice_unknown_or_orphaned_by_a_killed_server_each_task_ends_once() {
    let mut live = live();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let marker = live.codex_marker();
    let notes = live.acplb.vendor_notes.clone();
    let told = move |id: &str| {
        let notes: Vec<Value> = notes.lock().unwrap().iter().map(|(_, p)| p.clone()).collect();
        !states(&notes, id).is_empty()
    };
    let (first, second, again, unknown, after_kill) = live
        .acplb
        .client(&updates, async |cx| {
            let id = crate::background::open(&cx, &cwd, air(&["asyncTasks"])).await?;
            assert_end_turn(&prompt(&cx, &id, "scenario:background go").await?.stop_reason);
            let first = command_updates(&updates).0["toolCallId"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            assert_end_turn(&prompt(&cx, &id, "/terminals").await?.stop_reason);
            let (terminal, _) = listed(&updates.agent_text()).unwrap_or_default();
            let stop = format!("/terminals stop {terminal}");
            assert_end_turn(&prompt(&cx, &id, &stop).await?.stop_reason);
            assert!(
                eventually(Duration::from_secs(10), || told(&first)).await,
                "the stop was told"
            );
            let params = |task: &str| json!({ "sessionId": id.to_string(), "asyncTaskId": task });
            let again = vendor(&cx, "_session/async_task/stop", params(&first)).await?;
            let unknown = vendor(&cx, "_session/async_task/stop", params("no-such-task")).await?;

            updates.clear();
            assert_end_turn(&prompt(&cx, &id, "scenario:background go").await?.stop_reason);
            let second = command_updates(&updates).0["toolCallId"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let server = app_server(&marker).expect("the app-server runs");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(server as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .unwrap();
            // Once acplb has seen it end (it reaped it), the next prompt starts another
            // server: the old one's commands went with it.
            let reaped = || !std::path::Path::new(&format!("/proc/{server}")).exists();
            assert!(
                eventually(Duration::from_secs(10), reaped).await,
                "acplb reaped the killed server"
            );
            let after_kill = prompt(&cx, &id, "scenario:plain again").await?;
            Ok((first, second, again, unknown, after_kill))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_end_turn(&after_kill.stop_reason);
    assert_eq!(
        again,
        json!({ "stopped": false }),
        "a stopped task is not stopped twice"
    );
    assert_eq!(unknown, json!({ "stopped": false }));
    let notes = task_notes(&live);
    assert_eq!(states(&notes, &first), [json!("stopped")], "{notes:?}");
    assert!(states(&notes, "no-such-task").is_empty(), "{notes:?}");
    assert_eq!(states(&notes, &second), [json!("failed")], "{notes:?}");
    let (_, calls) = command_updates(&live.updates);
    let end = calls
        .iter()
        .rposition(|u| u["status"] == "failed")
        .expect("the orphaned call ended");
    assert!(
        calls[end]["content"]
            .to_string()
            .contains("Codex's server stopped"),
        "{:?}",
        calls[end]
    );
    let spawned = notes
        .iter()
        .filter(|n| n["update"]["sessionUpdate"] == "async_task_spawned")
        .count();
    assert_eq!(spawned, 2, "each task announced once: {notes:?}");
}
