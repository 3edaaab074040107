//! The `name` of every tool call: the tool as Codex's model knows it (ADR 0037). Where Codex's
//! item says which tool ran, the model's name for it (`exec_command`, `apply_patch`,
//! `mcp__<server>__<tool>`, `spawn_agent`, …); where an item comes from no one tool of the
//! model (a command the user ran, a subagent's activity), the item's type in snake case. One
//! table for both transports, so an editor sees the same name whichever runs.

/// A command Codex 0.169's model runs (unified exec, its default shell tool). Also a command
/// whose source Codex does not say (exec's `command_execution`, an approval request).
pub(crate) const EXEC_COMMAND: &str = "exec_command";
/// A file edit (`apply_patch`, a freeform tool).
pub(crate) const APPLY_PATCH: &str = "apply_patch";
/// A web search (the Responses API's hosted `web_search`).
pub(crate) const WEB_SEARCH: &str = "web_search";
/// An image the model looked at.
pub(crate) const VIEW_IMAGE: &str = "view_image";
/// Codex's request for more sandbox permissions.
pub(crate) const REQUEST_PERMISSIONS: &str = "request_permissions";
/// A subagent's own tool call: the tool that started it.
pub(crate) const SPAWN_AGENT: &str = "spawn_agent";
/// Codex's `subAgentActivity` item (no one tool of the model).
pub(crate) const SUBAGENT_ACTIVITY: &str = "subagent_activity";

/// A command by the app-server's `source`: input to a process unified exec keeps running
/// (`write_stdin`), a command the user ran (`userShell`), else one the model's command tool
/// started (`unifiedExecStartup`, or `agent`: Codex 0.169 reports an `exec_command` it runs
/// outside the sandbox so), which is [`EXEC_COMMAND`], as is an absent or unknown source.
pub(crate) fn command(source: Option<&str>) -> &'static str {
    match source {
        Some("unifiedExecInteraction") => "write_stdin",
        Some("userShell") => "user_shell",
        _ => EXEC_COMMAND,
    }
}

/// An MCP tool as Codex qualifies it for the model: `mcp__<server>__<tool>`.
pub(crate) fn mcp(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// A client (dynamic) tool: its namespace (which carries its own delimiter) then its name.
pub(crate) fn dynamic(namespace: Option<&str>, tool: &str) -> String {
    format!("{}{tool}", namespace.unwrap_or_default())
}

/// One of Codex's collaboration tools, from the app-server's camelCase (`spawnAgent`, `wait`)
/// or exec's snake case (`spawn_agent`, `wait`): the model's name (`spawn_agent`,
/// `wait_agent`). An unknown tool keeps its name, in snake case.
pub(crate) fn collab(tool: &str) -> String {
    let snake = snake_case(tool);
    match snake.as_str() {
        "wait" => "wait_agent".to_owned(),
        _ => snake,
    }
}

/// `camelCase` → `snake_case`; a name already in snake case is unchanged.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_by_source() {
        assert_eq!(command(Some("unifiedExecStartup")), "exec_command");
        assert_eq!(command(Some("unifiedExecInteraction")), "write_stdin");
        assert_eq!(command(Some("agent")), "exec_command");
        assert_eq!(command(Some("userShell")), "user_shell");
        assert_eq!(command(Some("hologram")), "exec_command");
        assert_eq!(command(None), "exec_command");
    }

    #[test]
    fn qualified_names() {
        assert_eq!(mcp("mockmcp", "echo"), "mcp__mockmcp__echo");
        assert_eq!(dynamic(Some("acme__"), "lookup"), "acme__lookup");
        assert_eq!(dynamic(None, "lookup"), "lookup");
    }

    #[test]
    fn collaboration_tools() {
        assert_eq!(collab("spawnAgent"), "spawn_agent");
        assert_eq!(collab("spawn_agent"), "spawn_agent");
        assert_eq!(collab("wait"), "wait_agent");
        assert_eq!(collab("sendInput"), "send_input");
        assert_eq!(collab("listAgents"), "list_agents");
        assert_eq!(collab("closeAgent"), "close_agent");
        assert_eq!(collab("teleportEverything"), "teleport_everything");
    }
}
