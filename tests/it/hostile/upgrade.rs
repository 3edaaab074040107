//! A Codex binary that disappears between two turns (an upgrade half-way, an uninstall): on
//! app-server the warm server, started from the old file, is kept and the turn runs on it (a
//! binary that cannot be read counts as unchanged); on exec, which starts Codex at each turn,
//! the turn fails with an error that says so. Either way acplb answers and goes on.

use acplb_playback::mock_model::MockConfig;

use crate::harness::{open_session, prompt};
use crate::live::{Live, assert_end_turn};
use crate::upgrade::write_launcher;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_removed_between_turns_keeps_the_warm_server_or_fails_the_exec_turn_clearly() {
    let bin = tempfile::tempdir().unwrap();
    let launcher = bin.path().join("codex");
    write_launcher(&launcher, None);
    let env = vec![("ACPLB_CODEX".to_owned(), launcher.display().to_string())];
    let mut live = Live::start_with(MockConfig::default(), &[], &env);
    let ws = live.workspace();
    let updates = live.updates.clone();
    let (before, after) = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let before = prompt(&cx, &s.session_id, "hello").await?;
            std::fs::remove_file(&launcher).unwrap();
            let after = prompt(&cx, &s.session_id, "hello again").await;
            Ok((before, after))
        })
        .await
        .unwrap();
    let stderr = live.acplb.stderr();
    assert_end_turn(&before.stop_reason);
    if std::env::var("ACPLB_TRANSPORT").as_deref() == Ok("exec") {
        let err = after.expect_err("no Codex to start");
        assert!(
            err.message.contains(&launcher.display().to_string()),
            "the error names the missing Codex: {err:?}"
        );
    } else {
        assert_end_turn(&after.expect("the warm server runs the turn").stop_reason);
        assert!(!stderr.contains("codex changed on disk"), "{stderr}");
    }
}
