//! Tool names under odd input (ADR 0037): a failing MCP call keeps its qualified name, and a
//! call of a tool Codex does not have makes no tool call without a name.

use crate::tool_names::{live_with, names, turn_with_mcp};

const SCENARIOS: &str = r#"
[scenarios.no_such_tool]
description = "a call of a tool Codex does not offer, then a command, then an answer"
[[scenarios.no_such_tool.steps]]
actions = [{ type = "function_call", name = "teleport", namespace = "nowhere__", arguments = { to = "mars" } }]
[[scenarios.no_such_tool.steps]]
actions = [{ type = "exec", cmd = "echo still here" }]
[[scenarios.no_such_tool.steps]]
actions = [{ type = "message", text = "carried on" }]
"#;

#[tokio::test]
async fn a_failing_mcp_call_keeps_its_qualified_name() {
    let mut live = live_with("");
    turn_with_mcp(&mut live, "auto", "scenario:mcp_fail break it").await;
    let calls = live.updates.of_kind("tool_call");
    let call = calls
        .iter()
        .find(|c| c["name"] == "mcp__mockmcp__fail")
        .unwrap_or_else(|| panic!("{calls:?}"));
    let id = call["toolCallId"].clone();
    let last = live
        .updates
        .of_kind("tool_call_update")
        .into_iter()
        .rfind(|u| u["toolCallId"] == id && u.get("status").is_some())
        .unwrap_or_else(|| panic!("never finished: {:?}", live.updates.json()));
    assert_eq!(last["status"], "failed", "{last}");
}

#[tokio::test]
async fn a_tool_codex_does_not_have_makes_no_nameless_call() {
    let mut live = live_with(SCENARIOS);
    turn_with_mcp(&mut live, "auto", "scenario:no_such_tool go").await;
    assert!(
        live.updates.agent_text().contains("carried on"),
        "{}",
        live.updates.agent_text()
    );
    // `names` panics on a tool call without one.
    let all = names(&live.updates);
    assert!(all.iter().any(|n| n == "exec_command"), "{all:?}");
    assert!(!all.iter().any(|n| n.contains("teleport")), "{all:?}");
}
