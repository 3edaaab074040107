//! `/mcp login <server>` on the app-server transport: an OAuth login to an MCP server that needs
//! one (the mock's stand-in at `/oauth-mcp`). acplb shows the page Codex asks the user to open,
//! the test plays the browser (it opens Codex's callback with a code, as the authorization
//! server's redirect would), and the prompt ends saying the login succeeded.

use std::io::{Read as _, Write as _};
use std::time::Duration;

use acplb_playback::mock_model::{MockConfig, MockModel, OAUTH_MCP_PATH};
use agent_client_protocol::v1::schema::{PromptResponse, StopReason};

use crate::harness::{Updates, eventually, open_session, prompt};
use crate::live::Live;

/// acplb on app-server with one MCP server, `secured`, behind the mock's OAuth, and Codex's
/// OAuth tokens kept in a file of its home (no keyring in tests).
pub fn live_with_secured_server() -> Live {
    let mock = MockModel::start(MockConfig::default()).expect("the mock model starts");
    let url = format!("http://{}{OAUTH_MCP_PATH}", mock.addr());
    let server = format!("mcp_servers.secured.url=\"{url}\"");
    let args = [
        "--transport",
        "app-server",
        "-c",
        "mcp_oauth_credentials_store=\"file\"",
        "-c",
        &server,
    ];
    Live::start_on(mock, &args, &[])
}

/// The page acplb showed for the login, once it is there (panics after 30 s).
pub async fn page_shown(updates: &Updates) -> String {
    let page = || {
        updates
            .agent_text()
            .split_whitespace()
            .find(|w| w.starts_with("http://") && w.contains("/oauth/authorize"))
            .map(str::to_owned)
    };
    assert!(
        eventually(Duration::from_secs(30), || page().is_some()).await,
        "no login page shown: {}",
        updates.agent_text()
    );
    page().unwrap_or_default()
}

/// Plays the browser after the user allowed access: opens the page's `redirect_uri` with
/// `code` and the page's `state`; Codex's answer to it.
pub async fn open_callback(page: &str, code: &str) -> String {
    let query = page.split_once('?').map_or("", |(_, q)| q);
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .map_or_else(|| panic!("no {name} in {page}"), percent_decode)
    };
    let (redirect, state) = (param("redirect_uri"), param("state"));
    let rest = redirect.strip_prefix("http://").expect("a loopback callback");
    let (host, path) = rest.split_once('/').expect("a callback path");
    let target = format!("/{path}?code={code}&state={state}");
    let host = host.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(&host).expect("Codex's callback listens");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok();
        answer
    })
    .await
    .unwrap()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Runs `/mcp login secured` in a new session, plays the browser with `code`; the prompt's
/// answer and the agent's text.
pub async fn login_with(live: &mut Live, code: &str) -> (PromptResponse, String) {
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let code = code.to_owned();
    live.acplb
        .client(&updates.clone(), async move |cx| {
            let (_, session) = open_session(&cx, &cwd).await?;
            let id = session.session_id.clone();
            let login = tokio::spawn({
                let cx = cx.clone();
                async move { prompt(&cx, &id, "/mcp login secured").await }
            });
            let page = page_shown(&updates).await;
            let callback = open_callback(&page, &code).await;
            assert!(callback.starts_with("HTTP/1.1"), "{callback}");
            let answer = login.await.expect("the prompt task")?;
            Ok((answer, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_login_shows_the_page_and_says_when_the_login_succeeded() {
    let mut live = live_with_secured_server();
    let (answer, text) = login_with(&mut live, "good-code").await;
    let stderr = live.acplb.stderr();
    assert_eq!(answer.stop_reason, StopReason::EndTurn, "{text}\n{stderr}");
    assert!(text.contains("**MCP login: `secured`**"), "{text}");
    assert!(
        text.contains("Logged in to the MCP server `secured`; its tools join the next turn."),
        "{text}\n{stderr}"
    );
    let asked = live.mock.requests();
    assert!(
        asked.iter().any(|r| r.path == "/oauth/token" && r.status == 200),
        "Codex traded the code for a token at the mock"
    );
    assert!(
        asked.iter().all(|r| !r.path.ends_with("/responses")),
        "the login is answered by acplb and Codex, never the model"
    );
}
