//! `/mcp` on the app-server transport: the MCP servers a session's thread sees (here one the
//! editor passes in `session/new`: `acplb mcp codex`), each with its state and tool count, and
//! `/mcp reload`. The command is only offered where it works (not on exec).

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, McpServer, McpServerStdio, NewSessionRequest};

use crate::harness::prompt;
use crate::live::{Live, assert_end_turn};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_lists_the_sessions_servers_with_state_and_tools_and_reloads() {
    let mut live = Live::start_with(MockConfig::default(), &["--transport", "app-server"], &[]);
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let server = McpServer::Stdio(
        McpServerStdio::new("helper", env!("CARGO_BIN_EXE_acplb"))
            .args(vec!["mcp".to_owned(), "codex".to_owned()]),
    );
    let (before, after, reloaded) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let session = cx
                .send_request(NewSessionRequest::new(&cwd).mcp_servers(vec![server]))
                .block_task()
                .await?;
            let id = &session.session_id;
            let first = prompt(&cx, id, "/mcp").await?;
            assert_end_turn(&first.stop_reason);
            let before = updates.agent_text();
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "hello").await?.stop_reason);
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/mcp").await?.stop_reason);
            let after = updates.agent_text();
            updates.clear();
            assert_end_turn(&prompt(&cx, id, "/mcp reload").await?.stop_reason);
            Ok((before, after, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let stderr = live.acplb.stderr();
    assert!(before.contains("has not run a turn yet"), "{before}\n{stderr}");
    assert!(
        after.contains("- `helper`: connected, ") && !after.contains("not run a turn"),
        "{after}\n{stderr}"
    );
    let tools: usize = after
        .split("- `helper`: connected, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(tools >= 2, "`acplb mcp codex` offers its tools: {after}");
    assert!(
        reloaded.contains("Codex read its MCP configuration again."),
        "{reloaded}\n{stderr}"
    );
    let asked = live.mock.requests();
    assert_eq!(asked.len(), 1, "only `hello` reached the model");
}
