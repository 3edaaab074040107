//! Codex's permission profiles as session modes (ADR 0038), end to end with the real Codex
//! 0.169.0 and the mock model, on the transport of this run (`ACPLB_TRANSPORT`): profiles the
//! test's `CODEX_HOME/config.toml` defines are offered on app-server behind the opening (the
//! answer offers acplb's own modes; a `config_option_update` adds the profiles to the `mode`
//! option), and a turn runs in the chosen one (a profile that writes applies a patch without
//! asking, one that does not asks); a session can start in one (`ACPLB_INITIAL_MODE`: the
//! opening waits for the list then) and a loaded session goes on in the one it was in. Exec
//! offers none, refuses one by name and says so of an initial one.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    LoadSessionRequest, NewSessionResponse, PermissionOptionKind, PromptResponse, SessionId, StopReason,
};
use serde_json::Value;

use crate::harness::{Answer, Updates, eventually, open_session, prompt, transport};
use crate::live::{Live, set_mode};
use crate::sessions::initialize;

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

/// The values of the `mode` option in the last `config_option_update` session `id` got, once
/// one offers `mode` (empty when none did within 20 s).
pub async fn updated_modes(updates: &Updates, id: &str, mode: &str) -> Vec<String> {
    let last = || {
        updates
            .all_with_sessions()
            .into_iter()
            .filter(|(s, u)| s == id && u["sessionUpdate"] == "config_option_update")
            .map(|(_, u)| mode_values(&u))
            .next_back()
            .unwrap_or_default()
    };
    eventually(std::time::Duration::from_secs(20), || {
        last().iter().any(|m| m == mode)
    })
    .await;
    last()
}

/// The values of the `mode` option among `update`'s config options.
pub fn mode_values(update: &Value) -> Vec<String> {
    update["configOptions"]
        .as_array()
        .and_then(|all| all.iter().find(|o| o["id"] == "mode"))
        .and_then(|o| o["options"].as_array())
        .map(|values| {
            values
                .iter()
                .filter_map(|v| v["value"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Once acplb has exited, a new one loads session `id` and prompts `text` in it: the mode the
/// load answered with, and the prompt's answer.
pub async fn load_again(live: &mut Live, id: &SessionId, text: &str) -> (String, PromptResponse) {
    live.acplb.wait_exit(std::time::Duration::from_secs(10)).await;
    live.respawn();
    let (updates, ws) = (live.updates.clone(), live.workspace());
    let (load, stop) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let load = cx
                .send_request(LoadSessionRequest::new(id.clone(), &ws))
                .block_task()
                .await?;
            Ok((load, prompt(&cx, id, text).await?))
        })
        .await
        .unwrap();
    let modes = serde_json::to_value(&load.modes).unwrap();
    (modes["currentModeId"].as_str().unwrap().to_owned(), stop)
}

/// acplb's own modes on app-server (exec has no plan mode).
pub const OWN: [&str; 4] = ["read-only", "auto", "full-access", "plan"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_are_offered_behind_the_opening_and_a_turn_runs_in_the_chosen_one() {
    let mut live = live_with_profiles(&[]);
    live.acplb
        .permissions
        .answer(Answer::Kind(PermissionOptionKind::RejectOnce));
    let ws = live.workspace();
    let updates = live.updates.clone();
    let permissions = live.acplb.permissions.clone();
    let app_server = transport() == "app-server";
    let watch = live.updates.clone();
    let (session, later, asked_locked, stops, refused) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            if !app_server {
                let refused = set_mode(&cx, &s.session_id, "permission-profile:builder").await;
                return Ok((s, vec![], 0, vec![], Some(refused)));
            }
            let id = s.session_id.to_string();
            let later = updated_modes(&watch, &id, "permission-profile:locked").await;
            set_mode(&cx, &s.session_id, "permission-profile:locked").await?;
            let mut stops = vec![prompt(&cx, &s.session_id, "scenario:patch add hello").await?];
            let asked_locked = permissions.seen().len();
            set_mode(&cx, &s.session_id, "permission-profile:builder").await?;
            stops.push(prompt(&cx, &s.session_id, "scenario:patch add hello").await?);
            Ok((s, later, asked_locked, stops, None))
        })
        .await
        .unwrap();
    let (modes, values, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert_eq!(modes, values, "the mode option offers the session's modes");
    if !app_server {
        assert_eq!(modes, OWN[..3], "exec offers no profiles");
        let e = refused.unwrap().unwrap_err();
        assert!(
            e.message.contains("unknown mode `permission-profile:builder`"),
            "{e:?}"
        );
        return;
    }
    assert_eq!(modes, OWN, "the answer came before Codex's list");
    assert_eq!(
        later,
        [
            &OWN[..],
            &["permission-profile:builder", "permission-profile:locked"]
        ]
        .concat(),
        "the profiles came behind it, in Codex's order (by name)"
    );
    let update = live
        .updates
        .of_kind("config_option_update")
        .into_iter()
        .find(|u| mode_values(u).len() == 6)
        .unwrap();
    let mode_option = &update["configOptions"][0];
    assert_eq!(mode_option["id"], "mode");
    assert_eq!(mode_option["currentValue"], "read-only", "nothing switched");
    assert_eq!(mode_option["options"][5]["description"], "Nothing may be written");
    assert_eq!(mode_option["options"][5]["name"], "Profile: locked");
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
    let (modes, _, current) = offered(&session);
    if !app_server {
        assert_eq!(current, "read-only", "exec has no profiles to start in");
        let told = format!("{:?}", live.updates.json());
        assert!(
            told.contains("starts in mode `read-only`, not `permission-profile:builder`"),
            "{told}"
        );
        assert!(told.contains("on the app-server transport only"), "{told}");
        return;
    }
    assert_eq!(current, "permission-profile:builder");
    assert!(
        modes.iter().any(|m| m == "permission-profile:locked"),
        "the opening waited for the list: {modes:?}"
    );
    assert_eq!(stop.unwrap().stop_reason, StopReason::EndTurn);
    assert!(live.acplb.permissions.seen().is_empty(), "nothing asked");
    assert!(ws.join("hello.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_loaded_in_a_profile_goes_on_in_it() {
    if transport() != "app-server" {
        return; // exec offers no profiles to be in (above)
    }
    let mut live = live_with_profiles(&[]);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let id = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id.to_string();
            updated_modes(&updates, &id, "permission-profile:builder").await;
            set_mode(&cx, &s.session_id, "permission-profile:builder").await?;
            Ok(s.session_id)
        })
        .await
        .unwrap();
    let (current, stop) = load_again(&mut live, &id, "scenario:patch add hello").await;
    assert_eq!(current, "permission-profile:builder");
    assert_eq!(stop.stop_reason, StopReason::EndTurn);
    assert!(live.acplb.permissions.seen().is_empty(), "nothing asked");
    assert!(ws.join("hello.txt").exists(), "the patch applied in `builder`");
}
