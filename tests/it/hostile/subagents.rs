//! Subagents that go wrong: a child whose model fails, many children at once (real Codex and
//! the mock model), and a Codex that sends collaboration items with missing or unknown fields,
//! messages and requests of a thread nobody spawned, and a child's approval request (a
//! stand-in app-server). Nothing hangs, nothing of a stranger thread shows, and every child's
//! tool call ends.

use agent_client_protocol::v1::schema::StopReason;

use crate::harness::{Updates, open_session, prompt};
use crate::subagents::{exec_notice_shown, live, on_exec, one_prompt, subagent, text};

use super::stand_in::{app_server, spawn_app_server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_model_fails_ends_failed_and_the_parent_goes_on() {
    let mut live = live();
    let stop = one_prompt(&mut live, None, "scenario:subagent_fail break it").await;
    assert_eq!(stop, StopReason::EndTurn);
    assert!(live.updates.agent_text().contains("The helper failed."));
    if on_exec() {
        assert!(exec_notice_shown(&live.updates));
        return;
    }
    let (_, last) = subagent(&live.updates, "Subagent: breaker");
    assert_eq!(last["status"], "failed", "{last}");
    assert!(text(&last).contains("the helper's model broke"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_children_each_get_a_call_that_ends() {
    let mut live = live();
    let stop = one_prompt(&mut live, None, "scenario:subagent_many fan out").await;
    assert_eq!(stop, StopReason::EndTurn);
    let said = live.updates.agent_text();
    assert!(said.contains("All helpers were asked."), "{said}");
    if on_exec() {
        assert!(exec_notice_shown(&live.updates));
        return;
    }
    for name in ["one", "two", "three"] {
        let (_, last) = subagent(&live.updates, &format!("Subagent: {name}"));
        assert_eq!(last["status"], "completed", "{name}: {last}");
    }
    let ids: std::collections::HashSet<String> = live
        .updates
        .of_kind("tool_call")
        .iter()
        .filter(|c| c["title"].as_str().is_some_and(|t| t.starts_with("Subagent")))
        .map(|c| c["toolCallId"].to_string())
        .collect();
    assert_eq!(ids.len(), 3, "one call per child");
}

/// The turn the stand-in plays: a malformed collaboration item, a spawned child (`ch-1`)
/// whose message, failed command and failed turn follow, a message and an approval request
/// of a thread nobody spawned (`stranger`), then the child's own approval request; the
/// answers acplb gives are logged to `answers.log`.
const TURN: &str = r#"t="th-$n"
emit() { printf '%s\n' "$1"; }
emit "{\"id\":$i,\"result\":{\"turn\":{\"id\":\"tu-1\",\"status\":\"inProgress\"}}}"
emit "{\"method\":\"turn/started\",\"params\":{\"threadId\":\"$t\",\"turn\":{\"id\":\"tu-1\"}}}"
emit "{\"method\":\"item/started\",\"params\":{\"threadId\":\"$t\",\"turnId\":\"tu-1\",\"item\":{\"type\":\"collabAgentToolCall\",\"id\":\"c1\",\"tool\":\"teleport\",\"status\":42,\"receiverThreadIds\":\"nope\",\"agentsStates\":[1,2]}}}"
emit "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"$t\",\"turnId\":\"tu-1\",\"item\":{\"type\":\"collabAgentToolCall\",\"id\":\"c2\"}}}"
emit "{\"method\":\"item/started\",\"params\":{\"threadId\":\"$t\",\"turnId\":\"tu-1\",\"item\":{\"type\":\"subAgentActivity\",\"id\":\"s1\",\"kind\":\"started\",\"agentThreadId\":\"ch-1\",\"agentPath\":\"/root/helper\"}}}"
emit "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"ch-1\",\"turnId\":\"ct-1\",\"item\":{\"type\":\"agentMessage\",\"id\":\"m1\",\"text\":\"child says hi\"}}}"
emit "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"stranger\",\"turnId\":\"x\",\"item\":{\"type\":\"agentMessage\",\"id\":\"m2\",\"text\":\"stranger danger\"}}}"
emit "{\"id\":900,\"method\":\"item/commandExecution/requestApproval\",\"params\":{\"threadId\":\"stranger\",\"turnId\":\"x\",\"itemId\":\"x9\",\"command\":\"rm -rf /\",\"cwd\":\"/\"}}"
read -r answer; printf '%s\n' "$answer" >> answers.log
emit "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"ch-1\",\"turnId\":\"ct-1\",\"item\":{\"type\":\"commandExecution\",\"id\":\"x1\",\"command\":\"ls /nowhere\",\"exitCode\":2,\"status\":\"failed\"}}}"
emit "{\"id\":901,\"method\":\"item/commandExecution/requestApproval\",\"params\":{\"threadId\":\"ch-1\",\"turnId\":\"ct-1\",\"itemId\":\"x2\",\"command\":\"touch child-file\",\"cwd\":\"/\"}}"
read -r answer; printf '%s\n' "$answer" >> answers.log
emit "{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"ch-1\",\"turn\":{\"id\":\"ct-1\",\"status\":\"failed\",\"error\":{\"message\":\"child exploded\"}}}}"
emit "{\"method\":\"item/completed\",\"params\":{\"threadId\":\"$t\",\"turnId\":\"tu-1\",\"item\":{\"type\":\"agentMessage\",\"id\":\"m3\",\"text\":\"parent done\"}}}"
emit "{\"method\":\"turn/completed\",\"params\":{\"threadId\":\"$t\",\"turn\":{\"id\":\"tu-1\",\"status\":\"completed\"}}}""#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_collab_items_strangers_and_a_childs_ask_are_handled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("answers.log");
    let codex = app_server(
        dir.path(),
        &TURN.replace("answers.log", &format!("'{}'", log.display())),
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let stop = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            prompt(&cx, &s.session_id, "go").await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert!(updates.agent_text().contains("parent done"));
    let everything = updates.json().iter().map(ToString::to_string).collect::<String>();
    assert!(
        !everything.contains("stranger danger"),
        "a stranger thread's message showed"
    );
    let (call, last) = subagent(&updates, "Subagent: helper");
    assert_eq!(call["kind"], "think");
    assert_eq!(last["status"], "failed", "{last}");
    let content = text(&last);
    assert!(content.contains("- child says hi"), "{content}");
    assert!(content.contains("- ran `ls /nowhere` (exit code 2)"), "{content}");
    assert!(content.contains("- Failed: child exploded"), "{content}");
    // Only the child's request became a permission prompt; the stranger's was refused.
    let seen = acplb.permissions.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(
        seen[0]["toolCall"]["title"], "Subagent helper: touch child-file",
        "{}",
        seen[0]
    );
    let answers = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines.len(), 2, "{answers}");
    assert!(
        lines[0].contains("\"id\":900") && lines[0].contains("\"error\""),
        "{answers}"
    );
    assert!(
        lines[1].contains("\"id\":901") && lines[1].contains("\"decision\""),
        "{answers}"
    );
}
