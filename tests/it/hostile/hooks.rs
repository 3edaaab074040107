//! `/hooks` under bad input (ADR 0044), on the transport of this run: a hook that changes
//! between `/hooks` and `/hooks trust` is not trusted (nothing is written to Codex's config and
//! the user is told to look again); a malformed hooks file is reported, not fatal; unknown
//! arguments get the usage.

use agent_client_protocol::v1::schema::StopReason;

use crate::harness::{open_session, prompt};
use crate::hooks::add_marker_hook;
use crate::live::Live;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_changed_after_listing_is_not_trusted_and_bad_files_are_reported() {
    let mut live = Live::start();
    let home = live.env.home();
    let marker = live.workspace().parent().unwrap().join("hook-ran");
    add_marker_hook(&home, &marker);
    std::fs::write(home.join("hooks.json"), "{ \"hooks\": [ this is not json").unwrap();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let u = updates.clone();
    let h = home.clone();
    let said = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let mut said = Vec::new();
            for text in ["/hooks please", "/hooks", "/hooks trust"] {
                if text == "/hooks trust" {
                    // The hook the user saw is swapped for another before they trust it.
                    let config = h.join("config.toml");
                    let t = std::fs::read_to_string(&config)
                        .unwrap()
                        .replace("touch ", "touch /tmp/x ");
                    std::fs::write(config, t).unwrap();
                }
                let before = u.agent_text().len();
                let r = prompt(&cx, &s.session_id, text).await?;
                assert_eq!(r.stop_reason, StopReason::EndTurn);
                said.push(u.agent_text()[before..].to_owned());
            }
            Ok(said)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    assert!(
        said[0].contains("`/hooks trust` then trusts"),
        "usage: {}",
        said[0]
    );
    assert!(said[1].contains("**not trusted**"), "{}", said[1]);
    assert!(
        said[1].contains("Codex says:") && said[1].contains("hooks.json"),
        "the bad file is reported: {}",
        said[1]
    );
    assert!(
        said[2].contains("changed or went away") && said[2].contains("none was trusted"),
        "{}",
        said[2]
    );
    let config = std::fs::read_to_string(home.join("config.toml")).unwrap();
    assert!(!config.contains("trusted_hash"), "nothing was trusted: {config}");
    assert!(!marker.exists());
}
