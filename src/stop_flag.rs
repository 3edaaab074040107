//! A flag raised by SIGTERM, SIGINT or SIGHUP, for blocking commands that run until stopped
//! (`acplb sessions show --follow`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use tokio::signal::unix::{SignalKind, signal};

/// Listens for SIGTERM, SIGINT and SIGHUP from now on (a signal no longer ends the process) and
/// returns the flag the first of them raises.
pub(crate) fn on_signals() -> anyhow::Result<Arc<AtomicBool>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .context("starting the signal listener")?;
    // Registered here, before the caller starts, so an early Ctrl-C is not lost.
    let mut signals = {
        let _in_runtime = runtime.enter();
        [
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::hangup(),
        ]
        .into_iter()
        .map(signal)
        .collect::<Result<Vec<_>, _>>()
        .context("listening for signals")?
    };
    let stop = Arc::new(AtomicBool::new(false));
    let raised = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("acplb-signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                let waits = signals.iter_mut().map(|s| Box::pin(s.recv()));
                futures::future::select_all(waits).await;
            });
            raised.store(true, Ordering::SeqCst);
        })
        .context("starting the signal listener")?;
    Ok(stop)
}
