//! `/mcp`: the MCP servers a session's thread sees (the editor's and Codex's own), each with its
//! state, login and tool count, asked of the server (`mcpServerStatus/list`, page by page);
//! `/mcp reload` first has Codex read its MCP configuration again.

use std::fmt::Write as _;

use serde_json::Value;

use super::protocol::requests::{McpServerReload, McpServerStatusList};
use super::rpc::Rpc;

/// The most pages read of one list.
const MAX_PAGES: usize = 10;

/// Markdown for the editor: the servers of `thread` (or of Codex's configuration when the
/// session has no thread yet), or why there is no answer.
pub(crate) async fn report(rpc: &Rpc, thread: Option<&str>, reload: bool) -> String {
    let mut out = String::from("**MCP servers**\n\n");
    if reload {
        match rpc.request(&McpServerReload).await {
            Ok(_) => out.push_str("Codex read its MCP configuration again.\n\n"),
            Err(e) => return format!("{out}Reloading the MCP configuration failed: {e}\n"),
        }
    }
    let mut servers = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = McpServerStatusList {
            cursor: cursor.take(),
            detail: "toolsAndAuthOnly",
            thread_id: thread.map(str::to_owned),
        };
        let page = match rpc.request(&params).await {
            Ok(page) => page,
            Err(e) => return format!("{out}Codex did not list its MCP servers: {e}\n"),
        };
        let Some(data) = page.get("data").and_then(Value::as_array) else {
            return format!("{out}Codex answered `mcpServerStatus/list` without a list of servers.\n");
        };
        servers.extend(data.iter().cloned());
        cursor = super::protocol::next_cursor(&page);
        if cursor.is_none() {
            break;
        }
    }
    out.push_str(&render(&servers));
    out
}

/// One line per server.
fn render(servers: &[Value]) -> String {
    if servers.is_empty() {
        return "No MCP servers are configured for this session.\n".to_owned();
    }
    let mut lines = Vec::new();
    for server in servers {
        let text = |key: &str| server.get(key).and_then(Value::as_str);
        let name = text("name").unwrap_or("(unnamed)");
        let state = match text("runtimeStatus") {
            Some("connected") => "connected",
            Some("starting") => "starting",
            Some("notStarted") => "not started",
            Some("authenticationRequired") => "needs a login",
            Some("failed") => "failed",
            Some("cancelled") => "cancelled",
            Some("disabled") => "disabled",
            Some(_) | None => "state unknown",
        };
        let tools = server
            .get("tools")
            .and_then(Value::as_object)
            .map_or(0, serde_json::Map::len);
        let mut line = format!(
            "- `{name}`: {state}, {tools} tool{}",
            if tools == 1 { "" } else { "s" }
        );
        match text("authStatus") {
            Some("notLoggedIn") => line.push_str(", not logged in"),
            Some("oAuth") => line.push_str(", logged in (OAuth)"),
            Some("bearerToken") => line.push_str(", bearer token"),
            _ => {}
        }
        if let Some(error) = text("toolsError") {
            let _ = write!(line, " (tools: {error})");
        }
        lines.push(line);
    }
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_server_shows_its_state_tools_and_login() {
        let servers = [
            json!({"name": "files", "runtimeStatus": "connected", "authStatus": "unsupported",
                   "tools": {"read": {}, "write": {}}, "toolsError": null}),
            json!({"name": "gh", "runtimeStatus": "authenticationRequired",
                   "authStatus": "notLoggedIn", "tools": {}, "toolsError": "401"}),
            json!({"name": "odd", "runtimeStatus": "something new", "tools": {"x": {}}}),
        ];
        let text = render(&servers);
        assert!(text.contains("- `files`: connected, 2 tools\n"), "{text}");
        assert!(
            text.contains("- `gh`: needs a login, 0 tools, not logged in (tools: 401)\n"),
            "{text}"
        );
        assert!(text.contains("- `odd`: state unknown, 1 tool\n"), "{text}");
        assert!(render(&[]).contains("No MCP servers"));
    }
}
