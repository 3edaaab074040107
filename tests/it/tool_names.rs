//! Every tool call carries the tool's `name` as Codex's model knows it (ADR 0037): a command
//! `exec_command`, an edit `apply_patch`, an MCP call `mcp__<server>__<tool>`, a web search
//! `web_search`; a permission question names the call it is about. Both transports.

use acplb_playback::mock_model::{MockConfig, Script};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, McpServer, McpServerStdio, NewSessionRequest};
use serde_json::Value;

use crate::harness::{Answer, Updates, prompt, transport};
use crate::hostile::codex::playback_bin;
use crate::live::{Live, assert_end_turn, set_mode};

const SCENARIOS: &str = r#"
[scenarios.names]
description = "one call of each kind: a command, an edit, an MCP call, a web search"
[[scenarios.names.steps]]
actions = [{ type = "exec", cmd = "echo named" }]
[[scenarios.names.steps]]
[[scenarios.names.steps.actions]]
type = "apply_patch"
patch = '''
*** Begin Patch
*** Add File: named.txt
+named
*** End Patch
'''
[[scenarios.names.steps]]
actions = [{ type = "tool_search", query = "mockmcp echo" }]
[[scenarios.names.steps]]
actions = [{ type = "mcp_call", server = "mockmcp", tool = "echo", arguments = { text = "named" } }]
[[scenarios.names.steps]]
actions = [{ type = "web_search", query = "agent client protocol" }, { type = "message", text = "all named" }]
"#;

/// The mock model with the built-in scenarios and `more`.
pub(crate) fn live_with(more: &str) -> Live {
    let script = Script::builtin()
        .layered_with(Script::from_toml_str(SCENARIOS, "tool-names").unwrap())
        .layered_with(Script::from_toml_str(more, "tool-names-more").unwrap());
    Live::start_with(MockConfig::default().with_script(script), &[], &[])
}

/// `text` prompted in a session in `mode` with `mockmcp` (playback's `mcp-echo`) as its MCP
/// server; the prompt must end its turn.
pub(crate) async fn turn_with_mcp(live: &mut Live, mode: &str, text: &str) {
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let server =
        McpServer::Stdio(McpServerStdio::new("mockmcp", playback_bin()).args(vec!["mcp-echo".into()]));
    let text = text.to_owned();
    let mode = mode.to_owned();
    let done = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let s = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![server]))
                .block_task()
                .await?;
            set_mode(&cx, &s.session_id, &mode).await?;
            prompt(&cx, &s.session_id, &text).await
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_end_turn(&done.stop_reason);
}

/// The `name` of each tool call, in order.
pub(crate) fn names(updates: &Updates) -> Vec<String> {
    updates
        .of_kind("tool_call")
        .iter()
        .map(|c| {
            c["name"]
                .as_str()
                .unwrap_or_else(|| panic!("a tool call without a name: {c}"))
                .to_owned()
        })
        .collect()
}

/// The tool call named `name`.
fn named(updates: &Updates, name: &str) -> Value {
    updates
        .of_kind("tool_call")
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no tool call named `{name}`: {:?}", updates.of_kind("tool_call")))
}

#[tokio::test]
async fn each_tool_call_carries_codexs_name_for_the_tool() {
    let mut live = live_with("");
    turn_with_mcp(&mut live, "auto", "scenario:names one of each").await;
    let updates = &live.updates;
    assert!(
        updates.agent_text().contains("all named"),
        "{}",
        updates.agent_text()
    );
    let all = names(updates);
    for expected in ["exec_command", "apply_patch", "mcp__mockmcp__echo", "web_search"] {
        assert!(all.iter().any(|n| n == expected), "no `{expected}` in {all:?}");
    }
    assert_eq!(named(updates, "exec_command")["title"], "echo named");
    assert_eq!(named(updates, "apply_patch")["kind"], "edit");
    assert_eq!(named(updates, "mcp__mockmcp__echo")["title"], "mockmcp.echo");
    assert_eq!(named(updates, "web_search")["kind"], "fetch");
    assert!(live.workspace().join("named.txt").exists(), "the edit ran");
}

#[tokio::test]
async fn a_permission_question_names_the_call_it_is_about() {
    let mut live = live_with("");
    live.acplb.permissions.answer(Answer::Kind(
        agent_client_protocol::v1::schema::PermissionOptionKind::RejectOnce,
    ));
    let done = live
        .one_text_turn("read-only", "scenario:escalate run outside the sandbox")
        .await
        .unwrap();
    assert_end_turn(&done.stop_reason);
    let asked = live.acplb.permissions.seen();
    if transport() == "exec" {
        // exec never asks (approval policy `never`): the refused command is still named.
        assert!(asked.is_empty(), "{asked:?}");
        assert!(
            names(&live.updates).iter().all(|n| n == "exec_command"),
            "{:?}",
            names(&live.updates)
        );
        return;
    }
    let question = asked
        .first()
        .unwrap_or_else(|| panic!("no question: {:?}", live.updates.json()));
    assert_eq!(question["toolCall"]["name"], "exec_command", "{question}");
    assert_eq!(names(&live.updates), ["exec_command"]);
}
