//! Codex's permission profiles as session modes (ADR 0038), end to end with the real Codex
//! 0.169.0 and the mock model, on the transport of this run (`ACPLB_TRANSPORT`): profiles the
//! test's `CODEX_HOME/config.toml` defines are offered beside acplb's own modes (as ACP modes
//! and as values of the `mode` option) on app-server, and a turn runs in the chosen one (a
//! profile that writes applies a patch without asking, one that does not asks); a session can
//! start in one (`ACPLB_INITIAL_MODE`). Exec offers none, and refuses one by name.

use std::path::Path;

use agent_client_protocol::v1::schema::{NewSessionResponse, PermissionOptionKind, StopReason};
use serde_json::Value;

use crate::harness::{Answer, open_session, prompt, transport};
use crate::live::{Live, set_mode};

/// The profiles every test here defines: `locked` writes nothing, `builder` writes the
/// workspace. `default_permissions` is what Codex wants beside `[permissions]` tables.
pub const PROFILES: &str = "\n[permissions.locked]\ndescription = \"Nothing may be written\"\nextends = \":read-only\"\n\n[permissions.builder]\nextends = \":workspace\"\n";

/// Writes `tables` at the end of the test's Codex config and `default_permissions` at its top.
pub fn define_profiles(home: &Path, tables: &str) {
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = format!("default_permissions = \":workspace\"\n{text}\n{tables}");
    std::fs::write(config, text).unwrap();
}

/// A live setup whose Codex defines [`PROFILES`]; `env` for acplb.
pub fn live_with_profiles(env: &[(String, String)]) -> Live {
    let live = Live::start_with(acplb_playback::mock_model::MockConfig::default(), &[], env);
    define_profiles(&live.env.home(), PROFILES);
    live
}

/// The ids of the session's ACP modes and of its `mode` option's values, and its current mode.
pub fn offered(session: &NewSessionResponse) -> (Vec<String>, Vec<String>, String) {
    let modes = serde_json::to_value(&session.modes).unwrap();
    let ids = |v: &Value, key: &str| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| m[key].as_str().unwrap().to_owned())
            .collect()
    };
    let options = serde_json::to_value(&session.config_options).unwrap();
    let mode_option = options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap();
    (
        ids(&modes["availableModes"], "id"),
        ids(&mode_option["options"], "value"),
        modes["currentModeId"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_are_modes_and_a_turn_runs_in_the_chosen_one() {
    let mut live = live_with_profiles(&[]);
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::RejectOnce));
    let ws = live.workspace();
    let updates = live.updates.clone();
    let permissions = live.acplb.permissions.clone();
    let app_server = transport() == "app-server";
    let (session, asked_locked, stops, refused) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            if !app_server {
                let refused = set_mode(&cx, &s.session_id, "permission-profile:builder").await;
                return Ok((s, 0, vec![], Some(refused)));
            }
            set_mode(&cx, &s.session_id, "permission-profile:locked").await?;
            let mut stops = vec![prompt(&cx, &s.session_id, "scenario:patch add hello").await?];
            let asked_locked = permissions.seen().len();
            set_mode(&cx, &s.session_id, "permission-profile:builder").await?;
            stops.push(prompt(&cx, &s.session_id, "scenario:patch add hello").await?);
            Ok((s, asked_locked, stops, None))
        })
        .await
        .unwrap();
    let (modes, values, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert_eq!(modes, values, "the mode option offers the session's modes");
    if !app_server {
        assert_eq!(
            modes,
            ["read-only", "auto", "full-access"],
            "exec offers no profiles"
        );
        let e = refused.unwrap().unwrap_err();
        assert!(
            e.message.contains("unknown mode `permission-profile:builder`"),
            "{e:?}"
        );
        return;
    }
    assert_eq!(
        modes,
        [
            "read-only",
            "auto",
            "full-access",
            "plan",
            "permission-profile:builder",
            "permission-profile:locked"
        ],
        "Codex's order (by name)"
    );
    let described = serde_json::to_value(&session.modes).unwrap();
    assert_eq!(
        described["availableModes"][5]["description"],
        "Nothing may be written"
    );
    assert_eq!(described["availableModes"][5]["name"], "Profile: locked");
    for stop in &stops {
        assert_eq!(stop.stop_reason, StopReason::EndTurn);
    }
    assert!(asked_locked >= 1, "the read-only profile asks before the patch");
    assert_eq!(
        live.acplb.permissions.seen().len(),
        asked_locked,
        "the workspace profile writes without asking"
    );
    assert!(ws.join("hello.txt").exists(), "the patch applied in `builder`");
    let switched: Vec<String> = live
        .updates
        .of_kind("current_mode_update")
        .iter()
        .map(|u| u["currentModeId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        switched,
        ["permission-profile:locked", "permission-profile:builder"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_starts_in_the_profile_acplb_initial_mode_names() {
    let env = [(
        "ACPLB_INITIAL_MODE".to_owned(),
        "permission-profile:builder".to_owned(),
    )];
    let mut live = live_with_profiles(&env);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let app_server = transport() == "app-server";
    let (session, stop) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let stop = if app_server {
                Some(prompt(&cx, &s.session_id, "scenario:patch add hello").await?)
            } else {
                None
            };
            Ok((s, stop))
        })
        .await
        .unwrap();
    let (_, _, current) = offered(&session);
    if !app_server {
        assert_eq!(current, "read-only", "exec has no profiles to start in");
        let told = format!("{:?}", live.updates.json());
        assert!(
            told.contains("starts in mode `read-only`, not `permission-profile:builder`"),
            "{told}"
        );
        return;
    }
    assert_eq!(current, "permission-profile:builder");
    assert_eq!(stop.unwrap().stop_reason, StopReason::EndTurn);
    assert!(live.acplb.permissions.seen().is_empty(), "nothing asked");
    assert!(ws.join("hello.txt").exists());
}
