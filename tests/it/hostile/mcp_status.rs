//! `/mcp` against a Codex that answers badly: an error, a list that is no list, entries of the
//! wrong shape, a refused reload. Each prompt still ends its turn normally with a line saying
//! what Codex did not give, and nothing reaches a model.

use crate::harness::{Updates, open_session, prompt};

use super::stand_in::{fake_codex, spawn_app_server};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_survives_errors_garbage_and_a_refused_reload() {
    let dir = tempfile::tempdir().unwrap();
    // The n-th `mcpServerStatus/list` gets the n-th answer; the reload is refused.
    let codex = fake_codex(
        dir.path(),
        r#"n=0
while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{\"id\":$i,\"result\":{}}" ;;
    *'"method":"thread/start"'*) echo "{\"id\":$i,\"result\":{\"thread\":{\"id\":\"th-1\"},\"model\":\"m\"}}" ;;
    *'"method":"model/list"'*) echo "{\"id\":$i,\"error\":{\"code\":-32601,\"message\":\"no\"}}" ;;
    *'"method":"config/mcpServer/reload"'*) echo "{\"id\":$i,\"error\":{\"code\":-32000,\"message\":\"reload refused\"}}" ;;
    *'"method":"mcpServerStatus/list"'*)
      n=$((n+1))
      case $n in
        1) echo "{\"id\":$i,\"error\":{\"code\":-32000,\"message\":\"status broke\"}}" ;;
        2) echo "{\"id\":$i,\"result\":{\"data\":\"every server\",\"nextCursor\":7}}" ;;
        *) echo "{\"id\":$i,\"result\":{\"data\":[5,{\"name\":3,\"tools\":[]},{\"name\":\"ok\",\"runtimeStatus\":\"connected\",\"tools\":{\"a\":{}}}],\"nextCursor\":null}}" ;;
      esac ;;
  esac
done"#,
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let texts = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let mut texts = Vec::new();
            for command in ["/mcp", "/mcp", "/mcp", "/mcp reload"] {
                updates.clear();
                let done = prompt(&cx, &s.session_id, command).await?;
                texts.push((done.stop_reason, updates.agent_text()));
            }
            Ok(texts)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", acplb.stderr()));
    for (stop, _) in &texts {
        assert_eq!(*stop, agent_client_protocol::v1::schema::StopReason::EndTurn);
    }
    assert!(
        texts[0].1.contains("Codex did not list its MCP servers") && texts[0].1.contains("status broke"),
        "{}",
        texts[0].1
    );
    assert!(texts[1].1.contains("without a list of servers"), "{}", texts[1].1);
    assert!(
        texts[2].1.contains("- `(unnamed)`: state unknown, 0 tools")
            && texts[2].1.contains("- `ok`: connected, 1 tool\n"),
        "{}",
        texts[2].1
    );
    assert!(
        texts[3].1.contains("Reloading the MCP configuration failed")
            && texts[3].1.contains("reload refused"),
        "{}",
        texts[3].1
    );
}
