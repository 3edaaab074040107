//! `/hooks` and `/hooks trust` (ADR 0044), end to end with the real Codex 0.169.0 and the mock
//! model on the transport of this run: a hook in Codex's config does not run until trusted;
//! `/hooks` shows what it runs and that it waits; `/hooks trust` trusts exactly what was shown,
//! after which Codex runs it.

use std::path::Path;
use std::time::Duration;

use crate::harness::{eventually, open_session, prompt};
use agent_client_protocol::v1::schema::StopReason;

use crate::live::Live;
use crate::skills::offers;

/// Adds a `UserPromptSubmit` hook to Codex's config that creates `marker`.
pub fn add_marker_hook(home: &Path, marker: &Path) {
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let hook = format!(
        "\n[hooks]\nUserPromptSubmit = [{{ hooks = [{{ type = \"command\", command = \"touch {}\" }}] }}]\n",
        marker.display()
    );
    std::fs::write(config, text + &hook).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_runs_only_once_trusted_and_hooks_shows_it() {
    let mut live = Live::start();
    let marker = live.workspace().parent().unwrap().join("hook-ran");
    add_marker_hook(&live.env.home(), &marker);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let m = marker.clone();
    let u = updates.clone();
    let said = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id;
            let mut said = Vec::new();
            assert_eq!(
                prompt(&cx, &id, "scenario:plain before trust").await?.stop_reason,
                StopReason::EndTurn
            );
            assert!(!m.exists(), "an untrusted hook ran");
            for text in ["/hooks trust", "/hooks", "/hooks trust", "/hooks"] {
                let before = u.agent_text().len();
                assert_eq!(prompt(&cx, &id, text).await?.stop_reason, StopReason::EndTurn);
                said.push(u.agent_text()[before..].to_owned());
            }
            // A new session (its thread reads the config) runs the trusted hook.
            let s2 = cx
                .send_request(agent_client_protocol::v1::schema::NewSessionRequest::new(&ws))
                .block_task()
                .await?;
            assert_eq!(
                prompt(&cx, &s2.session_id, "scenario:plain after trust")
                    .await?
                    .stop_reason,
                StopReason::EndTurn
            );
            Ok(said)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(said[0].contains("Send `/hooks` first"), "{}", said[0]);
    assert!(said[1].contains("`userPromptSubmit` runs `touch "), "{}", said[1]);
    assert!(said[1].contains("**not trusted**"), "{}", said[1]);
    assert!(said[1].contains("1 hook waits for your trust"), "{}", said[1]);
    assert!(
        said[2].contains("Trusted; Codex runs these from now on"),
        "{}",
        said[2]
    );
    assert!(said[3].contains(": trusted;"), "{}", said[3]);
    assert!(!said[3].contains("waits for your trust"), "{}", said[3]);
    assert!(offers(&live.updates, "hooks"), "/hooks is offered");
    assert!(
        eventually(Duration::from_secs(10), || marker.exists()).await,
        "the trusted hook ran"
    );
}
