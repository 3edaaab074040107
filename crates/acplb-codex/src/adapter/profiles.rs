//! A session's permission profiles as modes (ADR 0038), asked of the shared app-server for
//! the session's directory while it opens: within [`WAIT`] (a cold server's start included),
//! and [`ANSWER`] once the server is up (a server that never answers holds no opening up for
//! long). A Codex that cannot list them (a
//! configuration it cannot read, an error, no answer in time) leaves the session with acplb's
//! own modes, and a warning in the log; the first turn then says what is wrong with the
//! configuration, as Codex does.

use std::path::Path;
use std::time::Duration;

use acplb_core::session::modes::ProviderMode;

use crate::appserver::{self, AppServer};

/// How long a session's opening waits for the list (a cold server's start included).
const WAIT: Duration = Duration::from_secs(10);

/// How long a started server gets to answer (it reads its configuration: tens of
/// milliseconds).
const ANSWER: Duration = Duration::from_secs(2);

/// The modes of the profiles Codex defines for `cwd`; none when it cannot say.
pub(super) async fn offered(server: &AppServer, cwd: &Path) -> Vec<ProviderMode> {
    match tokio::time::timeout(WAIT, appserver::profiles::list(server, cwd, ANSWER)).await {
        Ok(Ok(listed)) => crate::profiles::modes(&listed),
        Ok(Err(why)) => {
            tracing::warn!(cwd = %cwd.display(), "{why}; the session offers acplb's own modes only");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!(cwd = %cwd.display(), "codex did not list its permission profiles within {WAIT:?}; the session offers acplb's own modes only");
            Vec::new()
        }
    }
}
