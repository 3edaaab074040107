//! A client that never reads acplb's stderr (it pipes it and forgets it): acplb logs through a
//! thread of its own, so once the pipe is full only that thread waits, and turns go on. Without
//! it, the first log line after the pipe filled would stop the runtime, and every session with it.

use std::time::Duration;

use acplb_playback::mock_model::MockConfig;
use agent_client_protocol::v1::schema::StopReason;
use tokio::io::AsyncReadExt as _;

use crate::harness::{open_session, prompt};
use crate::live::Live;

/// What a Linux pipe holds by default.
const PIPE: usize = 64 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_go_on_when_nobody_reads_stderr() {
    let debug = [("RUST_LOG".to_owned(), "debug".to_owned())];
    let mut live = Live::start_with(MockConfig::default(), &[], &debug);
    live.respawn_stderr_unread();
    let ws = live.workspace();
    let updates = live.updates.clone();
    let ended = live
        .acplb
        .client(&updates, async |cx| {
            let (_, s) = open_session(&cx, &ws).await?;
            let mut ended = 0;
            for i in 0..16 {
                let text = format!("scenario:plain turn {i}");
                let turn = prompt(&cx, &s.session_id, &text);
                let answer = tokio::time::timeout(Duration::from_secs(30), turn)
                    .await
                    .map_err(|_| {
                        agent_client_protocol::Error::internal_error().data(format!("turn {i} hung"))
                    })??;
                if answer.stop_reason == StopReason::EndTurn {
                    ended += 1;
                }
            }
            Ok(ended)
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(ended, 16, "every turn ended");
    // acplb wrote more than the pipe holds while nobody read: the pipe was full.
    let mut pipe = live.acplb.unread_stderr().expect("stderr held unread");
    let mut written = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while written.len() <= PIPE {
        match tokio::time::timeout(Duration::from_secs(5), pipe.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => written.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    assert!(
        written.len() > PIPE,
        "acplb wrote {} bytes, not enough to fill the pipe",
        written.len()
    );
}
