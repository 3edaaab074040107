//! A session's plugins, chosen and started off the runtime thread. Choosing them reads the
//! composer file and the trust list; building them may read `.atm.toml` files; starting them
//! claims the identity lock (a file created and fsynced) or opens an audit log. All of it runs on
//! the blocking pool within [`START_LIMIT`], so a stalled disk delays only this session's
//! `session/new`; only the result comes back to the loop.

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::Error;

use crate::error::{Reason, wire};
use crate::plugin::{PipelineSource, SessionPlugins, SessionStart};

/// The longest a session's plugins may take to start: then the request is answered with an
/// `open_stalled` error, and the stuck call is left to finish on its own (what it built is
/// dropped there, releasing what it claimed).
pub(super) const START_LIMIT: Duration = Duration::from_secs(60);

/// A session's plugins once they started, and what they added to its start.
#[derive(Debug)]
pub(super) struct Started {
    pub(super) plugins: SessionPlugins,
    pub(super) start: SessionStart,
}

/// Chooses the plugins of the session `start` describes and runs their start hooks, on the
/// blocking pool, waiting at most `limit`.
pub(super) async fn plugins(
    source: Arc<dyn PipelineSource>,
    mut start: SessionStart,
    limit: Duration,
) -> Result<Started, Error> {
    // The plugins log as part of the request that opened the session.
    let span = tracing::Span::current();
    let work = tokio::task::spawn_blocking(move || {
        span.in_scope(|| -> Result<Started, Error> {
            let plugins = source
                .for_session(&start.cwd, &start.session_id)
                .map_err(|e| wire::composer(&e))?;
            plugins
                .pipeline
                .on_session_start(&mut start)
                .map_err(|e| wire::plugin(&e))?;
            Ok(Started { plugins, start })
        })
    });
    match tokio::time::timeout(limit, work).await {
        Ok(Ok(started)) => started,
        Ok(Err(e)) => Err(wire::internal(
            Reason::Internal,
            &format!("starting the session's plugins stopped: {e}"),
        )),
        Err(_) => Err(wire::internal(
            Reason::OpenStalled,
            &format!(
                "the session's plugins did not start within {}: their files (composer.toml, the identity lock, an audit log) may be on a disk that does not answer",
                humantime::format_duration(limit)
            ),
        )),
    }
}
