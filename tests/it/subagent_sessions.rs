//! Codex's subagents as ACP sessions of their own (ADR 0055), end to end with the real Codex
//! (multi-agent v2 on) and the mock model, for a client that advertised
//! `clientCapabilities.subagents`: on app-server each child is announced on its parent's
//! session (`subagent_update`) before any of its traffic, its messages and tool calls come on
//! its own session id, its state follows its turn, its approvals are asked in its name, and a
//! load of the parent replays all of it; on exec (which sees no child's work) the client keeps
//! the tool calls and the notice.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, InitializeRequest, LoadSessionRequest, NewSessionRequest, SessionId, StopReason,
};
use serde_json::{Value, json};

use crate::harness::prompt;
use crate::live::{Live, set_mode};
use crate::subagents::{exec_notice_shown, live, on_exec, subagent};

/// `initialize` declaring `client` (the `clientCapabilities` JSON), `session/new`, `mode` if
/// given, then `text`; the session's id and the prompt's stop reason.
pub async fn turn_of(live: &mut Live, client: Value, mode: Option<&str>, text: &str) -> (String, StopReason) {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let client: ClientCapabilities = serde_json::from_value(client).unwrap();
    let text = text.to_owned();
    live.acplb
        .client(&updates, async move |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(client))
                .block_task()
                .await?;
            let s = cx.send_request(NewSessionRequest::new(&ws)).block_task().await?;
            if let Some(mode) = mode {
                set_mode(&cx, &s.session_id, mode).await?;
            }
            let stop = prompt(&cx, &s.session_id, &text).await?.stop_reason;
            Ok((s.session_id.to_string(), stop))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

/// A new acplb (the last one gone), loading `session` for a client that declared `client`
/// (the `clientCapabilities` JSON); its updates replace the earlier ones in `live.updates`.
pub async fn reload_as(live: &mut Live, client: Value, session: &str) {
    live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    live.respawn();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let caps: ClientCapabilities = serde_json::from_value(client).unwrap();
    let id = SessionId::new(session);
    live.acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            cx.send_request(LoadSessionRequest::new(id, &ws))
                .block_task()
                .await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
}

/// Whether a session other than `parent`'s (a child's) shows a tool call mentioning `doing`.
pub fn a_child_runs(all: &[(String, Value)], parent: &str, doing: &str) -> bool {
    all.iter()
        .any(|(s, u)| s != parent && u["sessionUpdate"] == "tool_call" && u.to_string().contains(doing))
}

/// `codex app-server`'s pid among the processes of a test's Codex home (`marker`).
pub fn app_server(marker: &str) -> Option<u32> {
    crate::harness::processes_with_env(marker)
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).nth(1) == Some(b"app-server".as_slice()))
        })
}

/// The announcements of children on `parent`'s session.
pub fn announced(all: &[(String, Value)], parent: &str) -> Vec<Value> {
    all.iter()
        .filter(|(s, u)| s == parent && u["sessionUpdate"] == "subagent_update" && u.get("title").is_some())
        .map(|(_, u)| u.clone())
        .collect()
}

/// The agent text of session `session`.
pub fn text_of(all: &[(String, Value)], session: &str) -> String {
    all.iter()
        .filter(|(s, u)| s == session && u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|(_, u)| u["content"]["text"].as_str())
        .collect()
}

/// The states `parent` reported for `child`, in order.
pub fn states(all: &[(String, Value)], parent: &str, child: &str) -> Vec<Value> {
    all.iter()
        .filter(|(s, u)| s == parent && u["sessionUpdate"] == "subagent_update" && u["sessionId"] == child)
        .filter_map(|(_, u)| u.get("state").cloned())
        .collect()
}

/// Checks the `scenario:subagent` child as its own session in `all`: announced before its
/// traffic, its words and its command there (not on the parent), ended idle. Its id.
fn check_child_session(all: &[(String, Value)], parent: &str) -> String {
    let children = announced(all, parent);
    assert_eq!(children.len(), 1, "{all:?}");
    let child = children[0]["sessionId"].as_str().unwrap().to_owned();
    assert!(child.starts_with(&format!("{parent}:subagent:")), "{child}");
    assert_eq!(children[0]["title"], "lister");
    assert_eq!(
        children[0]["capabilities"],
        json!({}),
        "the editor may not drive a child"
    );
    let first_of_child = all
        .iter()
        .position(|(s, _)| *s == child)
        .expect("the child's own updates");
    let announced_at = all
        .iter()
        .position(|(s, u)| s == parent && u["sessionId"] == child.as_str())
        .unwrap();
    assert!(announced_at < first_of_child, "announced before its traffic");
    let words = text_of(all, &child);
    assert!(words.contains("Listing the workspace."), "{words}");
    assert!(
        words.contains("The workspace holds README.md and more."),
        "{words}"
    );
    let ran = all.iter().any(|(s, u)| {
        *s == child && u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 0.5; ls")
    });
    assert!(ran, "the child's command is a tool call of its session: {all:?}");
    let parents = text_of(all, parent);
    assert!(parents.contains("The helper has finished."), "{parents}");
    assert!(!parents.contains("Listing the workspace"), "{parents}");
    let titles: Vec<&Value> = all
        .iter()
        .filter(|(s, _)| s == parent)
        .map(|(_, u)| &u["title"])
        .collect();
    assert!(
        !titles
            .iter()
            .any(|t| t.as_str().is_some_and(|t| t.starts_with("Subagent"))),
        "no tool call for it: {titles:?}"
    );
    let states = states(all, parent, &child);
    assert_eq!(states.first(), Some(&json!({"state": "running"})), "{states:?}");
    assert_eq!(
        states.last(),
        Some(&json!({"state": "idle", "stopReason": "end_turn"})),
        "{states:?}"
    );
    child
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_is_a_session_of_its_own_for_a_client_that_takes_them_and_a_load_replays_it() {
    let mut live = live();
    let (parent, stop) = turn_of(
        &mut live,
        json!({"subagents": {}}),
        None,
        "scenario:subagent ask a helper",
    )
    .await;
    assert_eq!(stop, StopReason::EndTurn);
    let all = live.updates.all_with_sessions();
    if on_exec() {
        // exec sees no child's work: the calls and the notice, as for any client.
        assert!(announced(&all, &parent).is_empty(), "{all:?}");
        assert!(all.iter().all(|(s, _)| *s == parent));
        subagent(&live.updates, "Waiting for subagents");
        assert!(exec_notice_shown(&live.updates));
        return;
    }
    let child = check_child_session(&all, &parent);
    // A load by a client that takes subagent sessions gets them again, on the same ids; one
    // that does not gets none of them (no id it never heard of).
    for takes in [true, false] {
        let caps = if takes {
            json!({"subagents": {}})
        } else {
            json!({})
        };
        reload_as(&mut live, caps, &parent).await;
        let replayed = live.updates.all_with_sessions();
        if takes {
            assert_eq!(check_child_session(&replayed, &parent), child);
        } else {
            assert!(
                replayed
                    .iter()
                    .all(|(s, u)| *s == parent && u["sessionUpdate"] != "subagent_update"),
                "{replayed:?}"
            );
            assert!(!live.updates.agent_text().contains("Listing the workspace"));
            assert!(live.updates.agent_text().contains("The helper has finished."));
        }
    }
}

/// In ACP's shapes and in AIR's (where the child is known by its thread's id).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_approval_is_asked_in_its_own_session() {
    if on_exec() {
        // exec never asks (approval policy `never`).
        return;
    }
    let air =
        json!({"_meta": {"jetbrains": {"air": {"version": 1, "capabilities": ["nativeSubagentSessions"]}}}});
    for client in [json!({"subagents": {}}), air] {
        let is_air = client.get("_meta").is_some();
        let mut live = live();
        let (parent, stop) = turn_of(
            &mut live,
            client,
            Some("read-only"),
            "scenario:subagent_escalate go",
        )
        .await;
        assert_eq!(stop, StopReason::EndTurn);
        let seen = live.acplb.permissions.seen();
        assert_eq!(seen.len(), 1, "{seen:?}");
        let all = live.updates.all_with_sessions();
        let child = if is_air {
            let spawned = crate::air_tasks::task_notes(&live);
            spawned[0]["update"]["subagentSessionId"]
                .as_str()
                .unwrap()
                .to_owned()
        } else {
            announced(&all, &parent)[0]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            seen[0]["sessionId"],
            child.as_str(),
            "asked in the child's name: {}",
            seen[0]
        );
        assert_eq!(seen[0]["toolCall"]["title"], "echo escalated-ok", "{}", seen[0]);
        // The asked-about call is the child's and ended there.
        let asked = &seen[0]["toolCall"]["toolCallId"];
        let ended = all
            .iter()
            .any(|(s, u)| *s == child && u["toolCallId"] == *asked && u["status"] == "completed");
        assert!(
            ended,
            "the approved command's call ended in the child's session: {all:?}"
        );
        assert!(text_of(&all, &child).contains("Escalation result:"), "{all:?}");
        if !is_air {
            // While the editor was asked, the child said it waited for it; then it ran again.
            let states = states(&all, &parent, &child);
            let asked = states.iter().position(|s| s["state"] == "requires_action");
            let asked = asked.unwrap_or_else(|| panic!("no requires_action: {states:?}"));
            assert_eq!(states[asked + 1], json!({"state": "running"}), "{states:?}");
            assert_eq!(states.last().unwrap()["state"], "idle", "{states:?}");
        }
    }
}
