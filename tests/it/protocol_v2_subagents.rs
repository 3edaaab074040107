//! Subagents on ACP protocol v2 (ADR 0061), end to end: the SDK's v2 client over acplb's stdio,
//! the real Codex (multi-agent tools on) and the mock model on app-server. On v2 subagent
//! sessions need no capability: each child is announced on its parent, its own words and
//! commands come as its session's, its state is mirrored on the parent and sent as its own
//! `state_update`, a prompt naming it is refused at once, and a cancel naming it stops it alone.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::eventually;
use crate::protocol_v2::{Seen, call, initialize, open, send_prompt, v2_client};
use crate::subagents::{live, on_exec};

/// The `state_update`s of `session`, in order.
fn states_of(seen: &Seen, session: &str) -> Vec<Value> {
    seen.addressed
        .lock()
        .unwrap()
        .iter()
        .filter(|(s, u)| s == session && u["sessionUpdate"] == "state_update")
        .map(|(_, u)| u.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_client_sees_each_subagent_as_a_session_with_its_own_state() {
    if on_exec() {
        // exec shows no subagent sessions.
        return;
    }
    let mut live = live();
    let ws = live.workspace();
    let seen = Seen::default();
    let (parent, refused) = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "auto").await?;
        send_prompt(&cx, &id, "scenario:subagent go").await?;
        let idle = || states_of(&seen, &id).last().is_some_and(|s| s["state"] == "idle");
        assert!(
            eventually(Duration::from_secs(60), idle).await,
            "the parent never went idle: {:?}",
            seen.addressed.lock().unwrap()
        );
        let child = seen
            .addressed
            .lock()
            .unwrap()
            .iter()
            .find(|(s, u)| *s == id && u["sessionUpdate"] == "subagent_update")
            .and_then(|(_, u)| u["sessionId"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let refused = send_prompt(&cx, &child, "do something else").await;
        // The session goes on after the refusal.
        call(&cx, "session/close", json!({"sessionId": id})).await?;
        Ok((id, refused))
    })
    .await
    .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    seen.assert_all_v2();
    let all = seen.addressed.lock().unwrap().clone();
    let announced: Vec<&Value> = all
        .iter()
        .filter(|(s, u)| *s == parent && u["sessionUpdate"] == "subagent_update" && u.get("title").is_some())
        .map(|(_, u)| u)
        .collect();
    assert_eq!(announced.len(), 1, "{all:?}");
    assert_eq!(announced[0]["title"], "lister");
    let child = announced[0]["sessionId"].as_str().unwrap().to_owned();
    let first_of_child = all.iter().position(|(s, _)| *s == child);
    let announced_at = all.iter().position(|(_, u)| u == announced[0]);
    assert!(announced_at < first_of_child, "announced before its own updates");
    let words: String = all
        .iter()
        .filter(|(s, u)| *s == child && u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|(_, u)| u["content"]["text"].as_str())
        .collect();
    assert!(!words.is_empty(), "the child's words are its own: {all:?}");
    let ran = all.iter().any(|(s, u)| {
        *s == child && u["sessionUpdate"] == "tool_call_update" && u.to_string().contains("ls")
    });
    assert!(ran, "its command is its own: {all:?}");
    let own: Vec<Value> = states_of(&seen, &child)
        .into_iter()
        .map(|mut s| {
            s.as_object_mut().unwrap().remove("sessionUpdate");
            s
        })
        .collect();
    assert_eq!(own.first(), Some(&json!({"state": "running"})), "{own:?}");
    assert_eq!(
        own.last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"})),
        "{own:?}"
    );
    let error = refused.expect_err("a child's session takes no prompt");
    assert!(error.message.contains("is a subagent's session"), "{error:?}");
    assert!(
        !all.iter()
            .any(|(s, u)| *s == child && u["sessionUpdate"] == "user_message_chunk"),
        "the refused prompt was not echoed"
    );
}

/// `scenario:subagent_short_wait`: the parent waits fifteen seconds for a child running
/// `sleep 30`. A v2 client cancels the child, whose mirrored state offers a cancel while it
/// runs: the child's own state ends `idle`/`cancelled` and the parent's turn goes on to its
/// end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v2_client_cancels_one_subagent_and_the_parent_goes_on() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let ws = live.workspace();
    let seen = Seen::default();
    let (parent, child) = v2_client(&mut live.acplb, &seen, async |cx| {
        initialize(&cx).await?;
        let id = open(&cx, &ws, "auto").await?;
        send_prompt(&cx, &id, "scenario:subagent_short_wait go").await?;
        let mut child = None;
        let offered = eventually(Duration::from_secs(60), || {
            child = seen.addressed.lock().unwrap().iter().find_map(|(s, u)| {
                let offers = *s == id
                    && u["sessionUpdate"] == "subagent_update"
                    && u["capabilities"]["cancel"].is_object()
                    && u["state"]["state"] == "running";
                offers.then(|| u["sessionId"].as_str().unwrap_or_default().to_owned())
            });
            child.is_some()
        })
        .await;
        assert!(
            offered,
            "no child offered a cancel: {:?}",
            seen.addressed.lock().unwrap()
        );
        let child = child.unwrap_or_default();
        let sleeping = || {
            seen.addressed
                .lock()
                .unwrap()
                .iter()
                .any(|(s, u)| *s == child && u.to_string().contains("sleep 30"))
        };
        assert!(
            eventually(Duration::from_secs(60), sleeping).await,
            "the child never slept"
        );
        cx.send_notification(agent_client_protocol::UntypedMessage::new(
            "session/cancel",
            json!({"sessionId": child}),
        )?)?;
        let stopped = || {
            states_of(&seen, &child)
                .last()
                .is_some_and(|s| s["stopReason"] == "cancelled")
        };
        assert!(
            eventually(Duration::from_secs(10), stopped).await,
            "the child was not stopped: {:?}",
            seen.addressed.lock().unwrap()
        );
        let idle = || states_of(&seen, &id).last().is_some_and(|s| s["state"] == "idle");
        assert!(
            eventually(Duration::from_secs(60), idle).await,
            "the parent never ended"
        );
        Ok((id, child))
    })
    .await
    .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    seen.assert_all_v2();
    let parents = states_of(&seen, &parent);
    assert_eq!(
        parents.last().map(|s| s["stopReason"].clone()),
        Some(json!("end_turn")),
        "{parents:?}"
    );
    let children = states_of(&seen, &child);
    assert_eq!(children.last().map(|s| s["state"].clone()), Some(json!("idle")));
}
