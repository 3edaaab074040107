//! Permission profiles gone wrong (ADR 0038), on the transport of this run: a profile Codex
//! cannot read leaves acplb's own modes and a first turn that says what is wrong; a profile
//! removed while a session is in it fails that session's next turn with a message naming it,
//! and a load of the session goes on in `read-only` and says why; an unknown profile id is
//! refused with the modes there are, by `session/set_mode`, by the `mode` option and as the
//! initial mode; a workspace's own `.codex/config.toml` adds no profile while Codex does not
//! trust the workspace. With a stand-in app-server: a list held back holds no `session/new`
//! up (it comes after the answer), and one that never comes holds an opening in a profile up
//! for a bounded time, which then starts in `read-only` and says why.

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::{
    SessionConfigOptionValue, SetSessionConfigOptionRequest, StopReason,
};

use crate::harness::{Updates, eventually, open_session, prompt, transport};
use crate::hostile::stand_in::fake_codex;
use crate::live::{Live, set_mode};
use crate::profiles::{
    OWN, PROFILES, define_profiles, live_with_profiles, load_again, mode_values, offered, updated_modes,
};
use crate::sessions::initialize;

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
    if transport() == "app-server" {
        let stderr = live.acplb.stderr_reader();
        assert!(
            eventually(std::time::Duration::from_secs(20), || stderr()
                .contains("did not list its permission profiles"))
            .await,
            "the list failed: {}",
            stderr()
        );
    }
    let offered_later = live.updates.of_kind("config_option_update");
    assert!(
        offered_later.iter().all(|u| !mode_values(u)
            .iter()
            .any(|m| m.starts_with("permission-profile:"))),
        "{offered_later:?}"
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
    let (gone, id) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let (_, s) = open_session(&cx, &ws).await?;
            updated_modes(&updates, &s.session_id.to_string(), "permission-profile:builder").await;
            set_mode(&cx, &s.session_id, "permission-profile:builder").await?;
            let config = home.join("config.toml");
            let text = std::fs::read_to_string(&config).unwrap();
            let without = text.replace("[permissions.builder]\nextends = \":workspace\"\n", "");
            assert_ne!(text, without);
            std::fs::write(&config, without).unwrap();
            let gone = prompt(&cx, &s.session_id, "scenario:plain hello").await;
            Ok((gone, s.session_id))
        })
        .await
        .unwrap();
    let e = gone.unwrap_err();
    assert!(
        e.message.contains("`builder`"),
        "the error names the profile: {e:?}"
    );
    // A load finds the profile gone: the session goes on in `read-only`, and says so.
    let (current, after) = load_again(&mut live, &id, "scenario:plain hello").await;
    assert_eq!(current, "read-only");
    let told = format!("{:?}", live.updates.json());
    assert!(
        told.contains("goes on in mode `read-only`, not `permission-profile:builder`"),
        "{told}"
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
    let app_server = transport() == "app-server";
    let later = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let id = s.session_id.to_string();
            // The user's own profiles come; the workspace's do not come with them.
            Ok(if app_server {
                updated_modes(&updates, &id, "permission-profile:locked").await
            } else {
                offered(&s).0
            })
        })
        .await
        .unwrap();
    assert!(!later.iter().any(|m| m.contains("sneaky")), "{later:?}");
    if app_server {
        assert!(
            later.iter().any(|m| m == "permission-profile:locked"),
            "{later:?}"
        );
    }
}

/// A stand-in `codex app-server` in `dir` that answers the handshake and `thread/start`, and
/// answers `permissionProfile/list` with the profile `late` only once `<dir>/release` exists
/// (`hold` true) or never (`hold` false); the rest it leaves unanswered.
fn listing_when_released(dir: &std::path::Path, hold: bool) -> std::path::PathBuf {
    let release = dir.join("release");
    let on_list = if hold {
        format!(
            r#"( while [ ! -e '{}' ]; do sleep 0.05; done
        echo "{{\"id\":$i,\"result\":{{\"data\":[{{\"id\":\"late\",\"allowed\":true}}],\"nextCursor\":null}}}}" ) &"#,
            release.display()
        )
    } else {
        ":".to_owned()
    };
    fake_codex(
        dir,
        &format!(
            r#"while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{{\"id\":$i,\"result\":{{}}}}" ;;
    *'"method":"thread/start"'*) echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"th-1\"}},\"model\":\"m\"}}}}" ;;
    *'"method":"permissionProfile/list"'*)
      {on_list} ;;
  esac
done"#
        ),
    )
}

/// `session/new` is answered while Codex's profile list is still held back: the answer offers
/// acplb's own modes, and the profiles the list brings once let go come after it, as a
/// `config_option_update`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_list_held_back_holds_no_session_new_up() {
    use crate::hostile::stand_in::spawn_app_server;
    let dir = tempfile::tempdir().unwrap();
    let codex = listing_when_released(dir.path(), true);
    let mut acplb = spawn_app_server(dir.path(), &codex, &[]);
    let (cwd, release) = (dir.path().to_owned(), dir.path().join("release"));
    let updates = Updates::default();
    let (session, later) = acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &cwd).await?;
            // Answered with the list still held: only now is it let go.
            std::fs::write(&release, "").unwrap();
            let later = updated_modes(&updates, &s.session_id.to_string(), "permission-profile:late").await;
            Ok((s, later))
        })
        .await
        .unwrap();
    let (modes, values, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert_eq!(modes, OWN);
    assert_eq!(values, modes);
    assert_eq!(
        later,
        [&OWN[..], &["permission-profile:late"]].concat(),
        "{}",
        acplb.stderr()
    );
}

/// A Codex that never answers `permissionProfile/list` holds an opening in a profile
/// (`ACPLB_INITIAL_MODE`) up for a bounded time only: the session starts in `read-only`, and
/// the user is told why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_list_that_never_comes_starts_an_initial_profile_in_read_only() {
    use crate::hostile::stand_in::spawn_app_server;
    let dir = tempfile::tempdir().unwrap();
    let codex = listing_when_released(dir.path(), false);
    let env = [("ACPLB_INITIAL_MODE", "permission-profile:late")];
    let mut acplb = spawn_app_server(dir.path(), &codex, &env);
    let cwd = dir.path().to_owned();
    let updates = Updates::default();
    let opened = acplb
        .client(&updates, async |cx| {
            // Well past the bounds (5 s for Codex's answer, 10 s for the opening's wait).
            let open = open_session(&cx, &cwd);
            Ok(tokio::time::timeout(std::time::Duration::from_secs(30), open).await)
        })
        .await
        .unwrap();
    let session = opened
        .expect("session/new within 30 s")
        .expect("session/new opens")
        .1;
    let (modes, _, current) = offered(&session);
    assert_eq!(current, "read-only");
    assert_eq!(modes, OWN);
    let told = format!("{:?}", updates.json());
    assert!(
        told.contains("starts in mode `read-only`, not `permission-profile:late`"),
        "{told}"
    );
    assert!(
        told.contains("did not list its permission profiles within"),
        "{told}"
    );
}
