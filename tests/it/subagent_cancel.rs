//! The editor cancels one subagent's work (ADR 0056), end to end with the real Codex and the
//! mock model on app-server, for a client that takes ACP's subagent sessions: while a turn of
//! the child runs its session offers `cancel`; a `session/cancel` of the child's id stops that
//! turn (its command too) and ends the child `idle`/`cancelled` with the offer withdrawn, while
//! the parent's turn goes on to its own end (a `wait_agent` of the parent's runs to its own
//! limit: Codex wakes it for a child's message, and an interrupted child sends none). Exec
//! shows no child as a session, so it has none to cancel.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, SessionId, StopReason};
use serde_json::{Value, json};

use crate::harness::{Updates, eventually, open_session_as};
use crate::live::Live;
use crate::subagent_sessions::{announced, text_of};
use crate::subagents::{live, on_exec};

/// What a cancel of one child left: the parent's stop reason, how long after the cancel the
/// child was shown stopped, the Codex work left a second after the parent's answer, and the
/// parent's session id.
pub struct ChildCancelled {
    pub stop: StopReason,
    pub stopped_after: Duration,
    pub left: Vec<u32>,
    pub parent: String,
}

/// The child state updates (`state` and `capabilities`) `parent` reported for `child`.
pub fn offers(all: &[(String, Value)], parent: &str, child: &str) -> Vec<(Value, Value)> {
    all.iter()
        .filter(|(s, u)| s == parent && u["sessionUpdate"] == "subagent_update" && u["sessionId"] == child)
        .filter(|(_, u)| u.get("state").is_some())
        .map(|(_, u)| {
            (
                u["state"].clone(),
                u.get("capabilities").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// Cancels the subagent session `child` of `parent` and waits (ten seconds at most) until its
/// state says it was cancelled.
pub async fn cancel_and_see_cancelled(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    seen: &Updates,
    parent: &str,
    child: &str,
) {
    cx.send_notification(CancelNotification::new(SessionId::new(child)))
        .unwrap();
    let stopped = || {
        let all = seen.all_with_sessions();
        let last = offers(&all, parent, child).pop();
        last.is_some_and(|(state, _)| state["stopReason"] == "cancelled")
    };
    assert!(
        eventually(Duration::from_secs(10), stopped).await,
        "the child was not stopped: {:?}",
        seen.all_with_sessions()
    );
}

/// The id of a child announced on `parent` whose state offers the editor a cancel, and whose
/// session showed a tool call mentioning `doing`, once there is one.
pub fn cancellable_child(seen: &Updates, parent: &str, doing: &str) -> Option<String> {
    let all = seen.all_with_sessions();
    announced(&all, parent).iter().find_map(|child| {
        let id = child["sessionId"].as_str()?;
        let offered = offers(&all, parent, id)
            .last()
            .is_some_and(|(_, caps)| caps["cancel"] == json!({}));
        let busy = all
            .iter()
            .any(|(s, u)| s == id && u["sessionUpdate"] == "tool_call" && u.to_string().contains(doing));
        (offered && busy).then(|| id.to_owned())
    })
}

/// `initialize` taking subagent sessions, then `text` prompted; once a child offers a cancel
/// while its session shows a call mentioning `doing`, `session/cancel` of that child's id.
pub async fn cancel_a_child(live: &mut Live, text: &str, doing: &str) -> ChildCancelled {
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (marker, acplb_pid) = (live.codex_marker(), live.acplb.pid);
    let (text, doing) = (text.to_owned(), doing.to_owned());
    live.acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            let parent = id.to_string();
            let turn = cx
                .send_request(PromptRequest::new(id.clone(), vec![text.into()]))
                .block_task();
            let canceller = async {
                let mut child = None;
                let found = eventually(Duration::from_secs(60), || {
                    child = cancellable_child(&seen, &parent, &doing);
                    child.is_some()
                })
                .await;
                assert!(
                    found,
                    "no child offered a cancel while busy: {:?}",
                    seen.all_with_sessions()
                );
                let child = child.unwrap_or_default();
                let at = Instant::now();
                cx.send_notification(CancelNotification::new(SessionId::new(child.as_str())))
                    .unwrap();
                let stopped = || {
                    let all = seen.all_with_sessions();
                    let last = offers(&all, &parent, &child).pop();
                    last.is_some_and(|(state, _)| state["state"] != "running")
                };
                assert!(
                    eventually(Duration::from_secs(60), stopped).await,
                    "the child never stopped"
                );
                at.elapsed()
            };
            let (resp, stopped_after) = tokio::join!(turn, canceller);
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            Ok(ChildCancelled {
                stop: resp?.stop_reason,
                stopped_after,
                left,
                parent,
            })
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

/// `scenario:subagent_short_wait`: the parent waits fifteen seconds for a child running `sleep 30`.
/// Cancelling the child stops its sleep at once, and the parent's turn goes on to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_one_childs_work_stops_it_and_the_parent_goes_on() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let done = cancel_a_child(&mut live, "scenario:subagent_short_wait nap", "sleep 30").await;
    assert_eq!(done.stop, StopReason::EndTurn, "the parent was not cancelled");
    assert!(done.left.is_empty(), "Codex work left: {:?}", done.left);
    let all = live.updates.all_with_sessions();
    assert!(
        text_of(&all, &done.parent).contains("Done waiting for the sleeper."),
        "the parent's turn went on: {all:?}"
    );
    let child = announced(&all, &done.parent)[0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (state, caps) = offers(&all, &done.parent, &child).pop().unwrap();
    assert_eq!(
        state,
        json!({"state": "idle", "stopReason": "cancelled"}),
        "{all:?}"
    );
    assert_eq!(
        caps.get("cancel").cloned().unwrap_or(Value::Null),
        Value::Null,
        "offer withdrawn"
    );
    // The child's command ended with it.
    let open: Vec<_> = all
        .iter()
        .filter(|(s, u)| *s == child && u["sessionUpdate"] == "tool_call")
        .filter(|(_, u)| {
            let id = &u["toolCallId"];
            !all.iter().any(|(s, e)| {
                *s == child
                    && e["toolCallId"] == *id
                    && matches!(e["status"].as_str(), Some("completed" | "failed"))
            })
        })
        .collect();
    assert!(open.is_empty(), "the child's calls left open: {open:?}");
    assert!(
        done.stopped_after < Duration::from_secs(10),
        "the child's sleep was not stopped: it ended {:?} after the cancel\n{}",
        done.stopped_after,
        live.acplb.stderr()
    );
}

/// `scenario:subagent_leave` leaves a child running `sleep 30` when the parent answers: between
/// turns the child offers no cancel. The next prompt (`scenario:sleep`) takes it up: it offers
/// the cancel again, and a cancel then stops it while the parent's own turn runs on (until the
/// test cancels that too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_left_working_is_taken_up_by_the_next_turn_and_can_be_cancelled_there() {
    if on_exec() {
        return;
    }
    let mut live = live();
    let (ws, updates) = (live.workspace(), live.updates.clone());
    let seen = updates.clone();
    let (marker, acplb_pid) = (live.codex_marker(), live.acplb.pid);
    let (first, second, parent, child, left) = live
        .acplb
        .client(&updates, async move |cx| {
            let id = open_session_as(&cx, &ws, json!({"subagents": {}})).await?;
            let parent = id.to_string();
            let first = crate::harness::prompt(&cx, &id, "scenario:subagent_leave go")
                .await?
                .stop_reason;
            let between = seen.all_with_sessions().len();
            let turn = cx
                .send_request(PromptRequest::new(id.clone(), vec!["scenario:sleep wait".into()]))
                .block_task();
            let canceller = async {
                let mut child = None;
                let offered_again = eventually(Duration::from_secs(60), || {
                    let all = seen.all_with_sessions();
                    child = announced(&all, &parent)
                        .first()
                        .and_then(|c| c["sessionId"].as_str().map(str::to_owned));
                    // Once the parent's own `sleep 30` runs too.
                    let parent_sleeps = all[between..].iter().any(|(s, u)| {
                        *s == parent
                            && u["sessionUpdate"] == "tool_call"
                            && u.to_string().contains("sleep 30")
                    });
                    parent_sleeps
                        && child.as_deref().is_some_and(|c| {
                            offers(&all[between..], &parent, c)
                                .last()
                                .is_some_and(|(_, caps)| caps["cancel"] == json!({}))
                        })
                })
                .await;
                assert!(
                    offered_again,
                    "the next turn offered no cancel: {:?}",
                    seen.all_with_sessions()
                );
                let child = child.unwrap_or_default();
                cx.send_notification(CancelNotification::new(SessionId::new(child.as_str())))
                    .unwrap();
                let stopped = || {
                    let all = seen.all_with_sessions();
                    offers(&all, &parent, &child)
                        .last()
                        .is_some_and(|(state, _)| state["stopReason"] == "cancelled")
                };
                assert!(
                    eventually(Duration::from_secs(10), stopped).await,
                    "the child was not stopped"
                );
                // Only the child: the parent's own `sleep 30` still runs.
                let all = seen.all_with_sessions();
                let parents: Vec<_> = all.iter().filter(|(s, _)| *s == parent).map(|(_, u)| u).collect();
                let sleep = parents
                    .iter()
                    .find(|u| u["sessionUpdate"] == "tool_call" && u.to_string().contains("sleep 30"))
                    .map(|u| u["toolCallId"].clone());
                let ended = parents.iter().any(|u| {
                    Some(&u["toolCallId"]) == sleep.as_ref()
                        && matches!(u["status"].as_str(), Some("completed" | "failed"))
                });
                assert!(
                    sleep.is_some() && !ended,
                    "the parent's command was stopped too: {all:?}"
                );
                cx.send_notification(CancelNotification::new(id.clone())).unwrap();
                child
            };
            let (resp, child) = tokio::join!(turn, canceller);
            let left = crate::harness::codex_work_left(&marker, acplb_pid, Duration::from_secs(1)).await;
            Ok((first, resp?.stop_reason, parent, child, left))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(first, StopReason::EndTurn);
    assert_eq!(second, StopReason::Cancelled);
    assert!(left.is_empty(), "Codex work left: {left:?}");
    let all = live.updates.all_with_sessions();
    assert_eq!(announced(&all, &parent).len(), 1, "taken up, not announced again");
    let caps: Vec<Value> = offers(&all, &parent, &child)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    // Offered in the first turn, withdrawn at its end, offered again in the second, withdrawn
    // at the child's end.
    let turns: Vec<bool> = caps.iter().map(|c| c["cancel"] == json!({})).collect();
    let changes: Vec<bool> = turns.windows(2).filter(|w| w[0] != w[1]).map(|w| w[1]).collect();
    assert_eq!(changes, [false, true, false], "{caps:?}");
}
