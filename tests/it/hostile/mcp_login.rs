//! `/mcp login` gone wrong: the authorization server refuses the code, the server named is not
//! configured, no server is named, and the user gives up while the page is open. Each ends the
//! prompt with words that say what happened, and the session goes on. A client that hangs up
//! while the page is open leaves acplb exiting cleanly and no Codex behind.

use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema::{CancelNotification, StopReason};

use crate::harness::{open_session, prompt};
use crate::live::assert_end_turn;
use crate::mcp_login::{live_with_secured_server, login_with, page_shown};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_code_ends_the_login_with_codexs_reason() {
    let mut live = live_with_secured_server();
    let (answer, text) = login_with(&mut live, acplb_playback::mock_model::REFUSED_CODE).await;
    assert_end_turn(&answer.stop_reason);
    assert!(
        text.contains("The login to the MCP server `secured` did not succeed: "),
        "{text}\n{}",
        live.acplb.stderr()
    );
    assert!(!text.contains("Logged in"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_server_or_none_named_is_answered_at_once() {
    let mut live = live_with_secured_server();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (unknown, none) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            assert_end_turn(&prompt(&cx, &s.session_id, "/mcp login nosuch").await?.stop_reason);
            let unknown = updates.agent_text();
            updates.clear();
            assert_end_turn(&prompt(&cx, &s.session_id, "/mcp login").await?.stop_reason);
            Ok((unknown, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        unknown.contains("Codex could not start a login to the MCP server `nosuch`: "),
        "{unknown}"
    );
    assert!(
        !unknown.contains("**MCP login"),
        "no page for a server that is not there: {unknown}"
    );
    assert!(none.contains("`/mcp login <server>`"), "{none}");
    assert!(
        live.mock.requests().is_empty(),
        "nothing reached the model or the OAuth server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_page_is_open_ends_the_prompt_at_once_and_the_session_goes_on() {
    let mut live = live_with_secured_server();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let (stop, waited, after) = live
        .acplb
        .client(&updates.clone(), async move |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let id = s.session_id.clone();
            let login = tokio::spawn({
                let cx = cx.clone();
                let id = id.clone();
                async move { prompt(&cx, &id, "/mcp login secured").await }
            });
            page_shown(&updates).await;
            let asked = Instant::now();
            cx.send_notification(CancelNotification::new(id.clone()))?;
            let stop = login.await.expect("the prompt task")?.stop_reason;
            let waited = asked.elapsed();
            updates.clear();
            assert_end_turn(&prompt(&cx, &id, "/mcp").await?.stop_reason);
            Ok((stop, waited, updates.agent_text()))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert_eq!(stop, StopReason::Cancelled);
    assert!(waited < Duration::from_secs(1), "the cancel took {waited:?}");
    assert!(after.contains("- `secured`: "), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_while_the_page_is_open_leaves_acplb_exiting_and_no_codex_behind() {
    let mut live = live_with_secured_server();
    let (cwd, updates) = (live.workspace(), live.updates.clone());
    let watch = updates.clone();
    live.acplb
        .client(&updates, async move |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            let _login = cx.send_request(agent_client_protocol::v1::schema::PromptRequest::new(
                s.session_id.clone(),
                vec!["/mcp login secured".into()],
            ));
            page_shown(&watch).await;
            // The client hangs up with the login's page open and its prompt unanswered.
            Ok(())
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    let (code, took) = live.acplb.wait_exit(Duration::from_secs(15)).await;
    assert_eq!(code, Some(0), "exit after {took:?}: {}", live.acplb.stderr());
    assert!(
        crate::harness::eventually(Duration::from_secs(10), || live.codex_left().is_empty()).await,
        "{:?}",
        live.codex_left()
    );
}
