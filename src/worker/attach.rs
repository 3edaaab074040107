//! `acplb worker attach AGENT`: the worker's session, followed live.

use anyhow::bail;

pub(super) fn attach(agent: &str) -> anyhow::Result<bool> {
    let name =
        acplb_worker::config::AgentName::parse(agent).map_err(|e| anyhow::anyhow!("`{agent}`: {e}"))?;
    let state = crate::sessions::state_dir()?;
    let Some(session) = acplb_worker::worker::session_of(&state, &name) else {
        bail!("worker `{name}` has no session yet (has the daemon started it? `acplb worker status`)");
    };
    crate::sessions::show::follow(&state, &session)
}
