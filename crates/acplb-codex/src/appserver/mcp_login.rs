//! `/mcp login <server>`: an OAuth login to one MCP server. Codex does the work
//! (`mcpServer/oauth/login`: discovery, client registration, a callback on 127.0.0.1, the token
//! kept in its credential store); acplb shows the page to open at once, waits for
//! `mcpServer/oauthLogin/completed`, then has Codex read its MCP configuration again so the
//! server's tools join the next turn.

use super::protocol::requests::{McpOauthLogin, McpServerReload};
use super::rpc::{LoginEnd, Rpc};
use super::wire;

/// What to tell the user while the login waits for the browser.
pub(crate) fn open_page(server: &str, url: &str) -> String {
    format!(
        "**MCP login: `{server}`**\n\nOpen this page in a browser on the machine Codex runs on \
         (its answer comes back to a port on 127.0.0.1 there) and allow access:\n\n{url}\n\n\
         Waiting for the login to finish… (cancel the prompt to stop waiting)\n"
    )
}

/// Starts the login; the page to open and the login's id, or why there is none.
pub(crate) async fn start(rpc: &Rpc, server: &str, thread: Option<&str>) -> Result<(String, String), String> {
    let answer = rpc
        .request(&McpOauthLogin {
            name: server.to_owned(),
            thread_id: thread.map(str::to_owned),
        })
        .await
        .map_err(|e| format!("Codex could not start a login to the MCP server `{server}`: {e}"))?;
    let text = |key: &str| wire::text(&answer, key).map(str::to_owned);
    match (text("authorizationUrl"), text("loginId")) {
        (Some(url), Some(id)) if url.starts_with("https://") || url.starts_with("http://") => Ok((url, id)),
        (Some(_), Some(_)) => Err(format!(
            "Codex started a login to `{server}` with a page that is not a web address; not shown"
        )),
        _ => Err(format!(
            "Codex started a login to `{server}` without a page to open or a login id; this Codex is too old for `/mcp login`"
        )),
    }
}

/// Waits for login `id` to end (cancel-safe) and says how it went.
pub(crate) async fn finish(rpc: &Rpc, server: &str, id: &str) -> String {
    match rpc.login_ended(id).await {
        Ok(LoginEnd::Success) => {
            let reload = match rpc.request(&McpServerReload).await {
                Ok(_) => "its tools join the next turn",
                Err(_) => {
                    "Codex did not read its MCP configuration again; start a new session to use its tools"
                }
            };
            format!("Logged in to the MCP server `{server}`; {reload}.\n")
        }
        Ok(LoginEnd::Failure(why)) => {
            format!("The login to the MCP server `{server}` did not succeed: {why}\n")
        }
        Err(gone) => format!(
            "codex app-server stopped during the login to `{server}` ({}); try again\n",
            gone.status
        ),
    }
}

/// `/mcp login` with no server named.
pub(crate) const USAGE: &str =
    "Name the MCP server to log in to: `/mcp login <server>` (`/mcp` lists them).\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_shown_whole_with_where_to_open_it() {
        let text = open_page("linear", "https://auth.example/authorize?state=s&x=1");
        assert!(text.contains("`linear`"), "{text}");
        assert!(
            text.contains("\n\nhttps://auth.example/authorize?state=s&x=1\n\n"),
            "{text}"
        );
        assert!(text.contains("127.0.0.1"), "{text}");
    }
}
