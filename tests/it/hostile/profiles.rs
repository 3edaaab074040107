//! Permission profiles gone wrong (ADR 0038), on the transport of this run: a profile Codex
//! cannot read leaves acplb's own modes and a first turn that says what is wrong; a profile
//! removed while a session is in it fails that session's next turn with a message naming it,
//! and another mode goes on; an unknown profile id is refused with the modes there are, by
//! `session/set_mode`, by the `mode` option and as the initial mode; a workspace's own
//! `.codex/config.toml` adds no profile while Codex does not trust the workspace.

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::{
    SessionConfigOptionValue, SetSessionConfigOptionRequest, StopReason,
};

use crate::harness::{open_session, prompt, transport};
use crate::live::{Live, set_mode};
use crate::profiles::{PROFILES, define_profiles, live_with_profiles, offered};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_profile_leaves_own_modes_and_the_turn_says_why() {
    let mut live = Live::start();
    define_profiles(
        &live.env.home(),
        "\n[permissions.good]\nextends = \":read-only\"\n[permissions.broken]\nextends = 42\n",
    );
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (session, answer) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let answer = prompt(&cx, &s.session_id, "scenario:plain hello").await;
            Ok((s, answer))
        })
        .await
        .unwrap();
    let (modes, _, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert!(
        !modes.iter().any(|m| m.starts_with("permission-profile:")),
        "no profile of a configuration Codex cannot read: {modes:?}"
    );
    let e = answer.unwrap_err();
    assert!(
        e.message.contains("config"),
        "the error names the configuration: {e:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_removed_under_a_session_fails_its_turn_by_name() {
    if transport() != "app-server" {
        return; // exec offers no profiles to be in (`profiles.rs`)
    }
    let mut live = live_with_profiles(&[]);
    let ws = live.workspace();
    let home = live.env.home();
    let updates = live.updates.clone();
    let (gone, after) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            set_mode(&cx, &s.session_id, "permission-profile:builder").await?;
            let config = home.join("config.toml");
            let text = std::fs::read_to_string(&config).unwrap();
            let without = text.replace("[permissions.builder]\nextends = \":workspace\"\n", "");
            assert_ne!(text, without);
            std::fs::write(&config, without).unwrap();
            let gone = prompt(&cx, &s.session_id, "scenario:plain hello").await;
            set_mode(&cx, &s.session_id, "auto").await?;
            let after = prompt(&cx, &s.session_id, "scenario:plain hello").await?;
            Ok((gone, after))
        })
        .await
        .unwrap();
    let e = gone.unwrap_err();
    assert!(
        e.message.contains("`builder`"),
        "the error names the profile: {e:?}"
    );
    assert_eq!(after.stop_reason, StopReason::EndTurn, "another mode goes on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_profile_id_is_refused_everywhere() {
    let env = [(
        "ACPLB_INITIAL_MODE".to_owned(),
        "permission-profile:nope".to_owned(),
    )];
    let mut live = live_with_profiles(&env);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (session, by_mode, by_option) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let by_mode = set_mode(&cx, &s.session_id, "permission-profile:nope").await;
            let by_option = cx
                .send_request(SetSessionConfigOptionRequest::new(
                    s.session_id.clone(),
                    "mode",
                    SessionConfigOptionValue::ValueId {
                        value: "permission-profile:../../etc".into(),
                    },
                ))
                .block_task()
                .await;
            Ok((s, by_mode, by_option))
        })
        .await
        .unwrap();
    let (_, _, current) = offered(&session);
    assert_eq!(current, "read-only", "an unknown initial mode leaves read-only");
    let told = format!("{:?}", live.updates.json());
    assert!(
        told.contains("starts in mode `read-only`, not `permission-profile:nope`"),
        "{told}"
    );
    let e = by_mode.unwrap_err();
    assert!(
        e.message
            .contains("unknown mode `permission-profile:nope`; the modes are read-only"),
        "{e:?}"
    );
    let e = by_option.unwrap_err();
    assert!(
        e.message.contains("is not a value of config option `mode`"),
        "{e:?}"
    );
    assert!(
        live.updates.of_kind("current_mode_update").is_empty(),
        "nothing changed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_config_adds_no_profile() {
    let mut live = Live::start_with(MockConfig::default(), &[], &[]);
    define_profiles(&live.env.home(), PROFILES);
    let ws = live.workspace();
    std::fs::create_dir_all(ws.join(".codex")).unwrap();
    std::fs::write(
        ws.join(".codex/config.toml"),
        "[permissions.sneaky]\ndescription = \"from the workspace\"\nextends = \":danger-full-access\"\n",
    )
    .unwrap();
    let config = std::fs::read_to_string(live.env.home().join("config.toml")).unwrap();
    assert!(
        !config.contains("trust_level"),
        "the workspace is not trusted: {config}"
    );
    let updates = live.updates.clone();
    let session = live
        .acplb
        .client(&updates, async |cx| Ok(open_session(&cx, &ws).await?.1))
        .await
        .unwrap();
    let (modes, _, _) = offered(&session);
    assert!(!modes.iter().any(|m| m.contains("sneaky")), "{modes:?}");
    if transport() == "app-server" {
        assert!(
            modes.iter().any(|m| m == "permission-profile:locked"),
            "{modes:?}"
        );
    }
}

/// A Codex that starts but never answers `permissionProfile/list` (nor anything but the
/// handshake and `thread/start`) holds `session/new` up for at most the 2 s a started server
/// gets; the session offers acplb's own modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_list_that_never_comes_holds_the_opening_up_briefly() {
    use crate::harness::Updates;
    use crate::hostile::stand_in::{fake_codex, spawn_app_server};
    let dir = tempfile::tempdir().unwrap();
    let codex = fake_codex(
        dir.path(),
        r#"while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{\"id\":$i,\"result\":{}}" ;;
    *'"method":"thread/start"'*) echo "{\"id\":$i,\"result\":{\"thread\":{\"id\":\"th-1\"},\"model\":\"m\"}}" ;;
  esac
done"#,
    );
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let cwd = dir.path().to_owned();
    let started = std::time::Instant::now();
    let opened = acplb
        .client(&Updates::default(), async |cx| {
            let open = open_session(&cx, &cwd);
            Ok(tokio::time::timeout(std::time::Duration::from_secs(5), open).await)
        })
        .await
        .unwrap();
    let session = opened
        .expect("session/new within 5 s")
        .expect("session/new opens")
        .1;
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "it did wait for the list"
    );
    let (modes, _, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert_eq!(modes, ["read-only", "auto", "full-access", "plan"]);
    assert!(
        acplb
            .stderr()
            .contains("did not list its permission profiles within"),
        "{}",
        acplb.stderr()
    );
}
