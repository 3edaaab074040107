//! A session's permission profiles as modes (ADR 0038), asked of the shared app-server for the
//! session's directory behind its opening, as the models are (`models.rs`): the session opens
//! at once with acplb's own modes and shows the profiles when Codex has listed them (core waits
//! for them only when the session opens in one). The list is asked within [`WAIT`] (a cold
//! server's start included) and [`ANSWER`] once the server is up (a request dropped before
//! the peer's own limit, so a server that never answers it is not declared dead). A Codex
//! that cannot list them leaves acplb's own modes, and a warning in the log; the first turn
//! then says what is wrong with the configuration, as Codex does. Exec offers none, and says
//! why.

use std::path::{Path, PathBuf};
use std::time::Duration;

use acplb_core::session::modes::ProviderModes;
use tokio::sync::watch;

use crate::appserver::{self, AppServer};

/// How long an ask waits for the list (a cold server's start included).
const WAIT: Duration = Duration::from_secs(10);

/// How long a started server gets to answer one page (it reads its configuration: tens of
/// milliseconds).
const ANSWER: Duration = Duration::from_secs(5);

/// Why a session on exec has no profiles.
pub(super) const ON_EXEC: &str = "Codex's permission profiles are offered on the app-server transport only (this acplb runs `codex exec` per prompt)";

/// The profiles of a session in `cwd` as they are learned: asked of `server` behind the
/// caller; on exec (no server), none, with [`ON_EXEC`].
pub(super) fn listing(server: Option<&AppServer>, cwd: &Path) -> watch::Receiver<ProviderModes> {
    let Some(server) = server else {
        return watch::channel(ProviderModes::Unavailable(ON_EXEC.to_owned())).1;
    };
    let (tx, rx) = watch::channel(ProviderModes::Asking);
    let (server, cwd) = (server.clone(), cwd.to_owned());
    tokio::task::spawn_local(async move {
        // Kept for watchers yet to come, should every one be gone now.
        tx.send_replace(ask(&server, cwd).await);
    });
    rx
}

/// The modes of the profiles Codex defines for `cwd`, or why there are none.
async fn ask(server: &AppServer, cwd: PathBuf) -> ProviderModes {
    match tokio::time::timeout(WAIT, appserver::profiles::list(server, &cwd, ANSWER)).await {
        Ok(Ok(listed)) => ProviderModes::Listed(crate::profiles::modes(&listed)),
        Ok(Err(why)) => {
            tracing::warn!(cwd = %cwd.display(), "{why}; the session offers acplb's own modes only");
            ProviderModes::Unavailable(why)
        }
        Err(_) => {
            let why = format!("codex did not list its permission profiles within {WAIT:?}");
            tracing::warn!(cwd = %cwd.display(), "{why}; the session offers acplb's own modes only");
            ProviderModes::Unavailable(why)
        }
    }
}
