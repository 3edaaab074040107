//! A session whose plugins wait on a disk that does not answer (its identity lock is a FIFO
//! nobody writes, so opening it blocks) holds up only its own `session/new`: other sessions
//! open, run and are cancelled as usual, and acplb still exits at once when the editor hangs up.

use std::time::{Duration, Instant};

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, NewSessionRequest, PromptRequest, StopReason,
};

use crate::harness::{eventually, until_sleeping};
use crate::live::Live;

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");
/// Far longer than any of these steps takes when nothing waits on the stuck session.
const PROMPTLY: Duration = Duration::from_secs(10);

/// Whether a thread of process `pid` waits in `open(2)` of a FIFO for a writer.
fn waits_on_a_fifo(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("wchan")).is_ok_and(|w| w.trim() == "wait_for_partner")
    })
}

#[tokio::test]
async fn a_session_stuck_on_its_identity_lock_delays_no_other_session() {
    let place = tempfile::tempdir().unwrap();
    let (xdg, stuck_ws) = (place.path().join("xdg"), place.path().join("stuck"));
    // `atm-identity` claims `stuck` of team `t` under the workspace's own ATM home, where a FIFO
    // waits in place of the lock file: reading it blocks until a writer comes, and none does.
    let locks = stuck_ws.join("atm/.config/atm/agent-sessions/t");
    std::fs::create_dir_all(&locks).unwrap();
    nix::unistd::mkfifo(
        &locks.join("stuck.lock"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::fs::write(
        stuck_ws.join("composer.toml"),
        "[[plugin]]\nid = \"atm-identity\"\nidentity = \"stuck\"\nteam = \"t\"\natm_home = \"atm\"\n",
    )
    .unwrap();
    let trusted = std::process::Command::new(ACPLB)
        .arg("trust")
        .arg(&stuck_ws)
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let xdg_var = ("XDG_CONFIG_HOME".to_owned(), xdg.display().to_string());
    let mut live = Live::start_with(MockConfig::default(), &[], &[xdg_var]);
    let (ws, updates, pid) = (live.workspace(), live.updates.clone(), live.acplb.pid);
    let (cancel_took, stop_reason, still_stuck) = live
        .acplb
        .client(&updates, async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let stuck = cx.send_request(NewSessionRequest::new(&stuck_ws)).block_task();
            let mut stuck = std::pin::pin!(stuck);
            // Polled once so the request goes out; it cannot be answered while the lock blocks.
            let early = tokio::time::timeout(Duration::from_millis(1), stuck.as_mut()).await;
            assert!(early.is_err(), "the stuck session answered: {early:?}");
            assert!(
                eventually(PROMPTLY, || waits_on_a_fifo(pid)).await,
                "acplb never reached the identity lock"
            );
            // Another session opens, runs a turn and is cancelled meanwhile.
            let other = tokio::time::timeout(
                PROMPTLY,
                cx.send_request(NewSessionRequest::new(&ws)).block_task(),
            )
            .await
            .expect("another session opens while one is stuck")?;
            let turn = cx
                .send_request(PromptRequest::new(
                    other.session_id.clone(),
                    vec!["scenario:sleep wait".into()],
                ))
                .block_task();
            let cancel = async {
                until_sleeping(&updates).await;
                let sent = Instant::now();
                cx.send_notification(CancelNotification::new(other.session_id.clone()))
                    .unwrap();
                sent
            };
            let (ended, sent) =
                tokio::time::timeout(Duration::from_secs(60), async { tokio::join!(turn, cancel) })
                    .await
                    .expect("the other session's turn ends once cancelled");
            let took = sent.elapsed();
            let still = tokio::time::timeout(Duration::from_millis(1), stuck.as_mut())
                .await
                .is_err();
            Ok((took, ended?.stop_reason, still && waits_on_a_fifo(pid)))
        })
        .await
        .unwrap();
    assert_eq!(stop_reason, StopReason::Cancelled);
    assert!(
        cancel_took < Duration::from_secs(3),
        "the cancel took {cancel_took:?}"
    );
    assert!(still_stuck, "the stuck session was still opening all along");
    // The editor hung up while the open is stuck: acplb leaves it and exits at once.
    let (code, took) = live.acplb.wait_exit(PROMPTLY).await;
    assert_eq!(code, Some(0), "{}", live.acplb.stderr());
    assert!(took < Duration::from_secs(5), "exiting took {took:?}");
}
