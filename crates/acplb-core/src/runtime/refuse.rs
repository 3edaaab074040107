//! What refuses a session request before anything opens: its cwd, an MCP transport the
//! provider does not take, a fork where no sessions are kept.

use std::path::Path;

use agent_client_protocol::v1::schema::McpServer;

use super::open::Reply;
use super::store::Store;
use crate::error::Reason;
use crate::error::wire;

impl Store {
    /// What refuses a request before anything is opened: its cwd, an MCP transport the
    /// provider does not take, a fork where no sessions are kept.
    pub(super) fn check_request(
        &self,
        cwd: &Path,
        mcp_servers: &[McpServer],
        reply: &Reply,
    ) -> Result<(), agent_client_protocol::Error> {
        check_cwd(cwd).map_err(|e| wire::invalid_params(Reason::InvalidParams, e))?;
        if let Some(why) = &self.capabilities.refuses_sse_mcp
            && let Some(name) = mcp_servers.iter().find_map(|s| match s {
                McpServer::Sse(sse) => Some(sse.name.clone()),
                _ => None,
            })
        {
            let msg = format!("MCP server `{name}` uses SSE, which {why}; use stdio or http");
            return Err(wire::invalid_params(Reason::InvalidParams, msg));
        }
        if matches!(reply, Reply::New { fork_of: Some(_), .. }) && self.options.durability.is_none() {
            return Err(wire::invalid_params(
                Reason::NotKept,
                "this acplb keeps no sessions, so it cannot fork one (it has no state directory: set ACPLB_STATE_DIR or HOME)",
            ));
        }
        Ok(())
    }
}

fn check_cwd(cwd: &Path) -> Result<(), String> {
    if !cwd.is_absolute() {
        return Err(format!("cwd `{}` must be an absolute path", cwd.display()));
    }
    match std::fs::metadata(cwd) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!("cwd `{}` is not a directory", cwd.display())),
        Err(e) => Err(format!("cwd `{}` is not accessible: {e}", cwd.display())),
    }
}
