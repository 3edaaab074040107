//! The shared server's pipes: acplb's lines written to its stdin; its stdout read into the
//! peer while the editor and the running turns keep up; its stderr, redacted once (with the
//! secrets of every session it served), into the log and its transcript; and its end, which
//! every waiter hears: it exited, acplb stopped it, or acplb stopped it because it stopped
//! answering.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use acplb_core::transport::{OutputFlow, Process, ProcessEvent};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use super::rpc::{Gone, Rpc};
use crate::transcript::Transcript;

/// Writes lines to the server's stdin until the peer is dropped or the pipe breaks.
pub(super) async fn write_lines(
    mut stdin: tokio::process::ChildStdin,
    mut rx: mpsc::UnboundedReceiver<String>,
) {
    while let Some(mut line) = rx.recv().await {
        line.push('\n');
        if let Err(e) = stdin.write_all(line.as_bytes()).await {
            tracing::debug!(error = %e, "codex app-server's stdin closed");
            return;
        }
    }
}

/// What the reader of one server process works with.
pub(super) struct Reader {
    pub(super) process: Process,
    pub(super) rpc: Rc<Rpc>,
    /// Fires when acplb stops the server (shutdown, a failed `initialize`).
    pub(super) stop: oneshot::Receiver<()>,
    /// The editor's backpressure.
    pub(super) flow: OutputFlow,
    /// Time the server gets to exit on an interrupt before it is killed.
    pub(super) grace: Duration,
    pub(super) transcript: Rc<RefCell<Transcript>>,
}

/// Reads the server's output into the peer until it exits or is stopped. While the editor is
/// behind (`flow`) or running turns have not taken what was read for them (`Rpc::room`), the
/// server's stdout is not read, so Codex waits on its pipe (and request limits wait too).
pub(super) async fn read_loop(reader: Reader) {
    let Reader {
        mut process,
        rpc,
        mut stop,
        flow,
        grace,
        transcript,
    } = reader;
    let status = loop {
        let event = tokio::select! {
            biased;
            _ = &mut stop => {
                stopped(&mut process, &rpc, &transcript, grace, None).await;
                return;
            }
            // Cancel-safe: `wedged` holds no state.
            unanswered = rpc.wedged() => {
                // It answers nothing, an interrupt included: it is killed at once.
                stopped(&mut process, &rpc, &transcript, Duration::ZERO, Some(unanswered)).await;
                return;
            }
            // Cancel-safe: waiting for the editor or for running turns to catch up holds no
            // state (the hold ends when its guard drops); next_event is cancel-safe.
            event = async {
                {
                    let _held = rpc.hold();
                    flow.ready().await;
                    rpc.room().await;
                }
                process.next_event().await
            } => event,
        };
        match event {
            ProcessEvent::Stdout(line) => rpc.dispatch(&line),
            ProcessEvent::StdoutOversized { bytes } => {
                tracing::warn!(bytes, "dropped an over-long line from codex app-server");
            }
            ProcessEvent::Stderr(line) => {
                // Shared by every session: cut of all their secrets, once, for log and transcript.
                let line = rpc.redact(&line);
                tracing::debug!(target: "acplb::codex::stderr", "{line}");
                transcript.borrow_mut().stderr(&line);
            }
            ProcessEvent::Exited(status) => break status,
        }
    };
    transcript.borrow_mut().exit(status);
    // What it started must not outlive it.
    process.kill_descendants().await;
    tracing::warn!(%status, "codex app-server exited");
    rpc.close(&Gone {
        status: status.to_string(),
        stderr_tail: rpc.redact(&process.stderr_tail()),
        unanswered: None,
    });
}

/// Stops the server (with its tree) and tells every waiter: acplb stopped it, because it did
/// not answer `unanswered` if that is set.
async fn stopped(
    process: &mut Process,
    rpc: &Rpc,
    transcript: &RefCell<Transcript>,
    grace: Duration,
    unanswered: Option<String>,
) {
    let status = process.stop(grace).await;
    transcript.borrow_mut().stopped(status);
    // The stderr says what a server that stopped answering was doing; on an ordinary stop
    // nobody waits for it.
    let stderr_tail = match &unanswered {
        Some(_) => rpc.redact(&process.stderr_tail()),
        None => String::new(),
    };
    rpc.close(&Gone {
        status: status.map_or_else(|| "stopped".into(), |s| s.to_string()),
        stderr_tail,
        unanswered,
    });
}
