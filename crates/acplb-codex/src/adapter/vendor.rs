//! The TS codex-acp's Codex vendor methods, for clients made for it (`JetBrains` AIR; ADR 0046):
//! `_codex/hooks/list {cwd}` and `_codex/hooks/trust {cwd, hooks: [{key, currentHash}]}` on both
//! transports (as `/hooks` is), and `_session/async_task/stop {sessionId, asyncTaskId}`, which
//! stops a background terminal as `/terminals stop` does.

use std::path::PathBuf;

use acplb_core::provider::{VendorFailure, VendorSession};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::on_server::OnServer;
use crate::appserver::AppServer;
use crate::appserver::hooks;
use crate::appserver::terminals::{self, Stopped};

#[derive(Deserialize)]
struct HooksList {
    cwd: PathBuf,
}

#[derive(Deserialize)]
struct HooksTrust {
    cwd: PathBuf,
    hooks: Vec<Seen>,
}

/// A hook as the client saw it listed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Seen {
    key: String,
    current_hash: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskStop {
    async_task_id: String,
}

fn read<P: DeserializeOwned>(params: &Value) -> Result<P, VendorFailure> {
    P::deserialize(params).map_err(|e| VendorFailure::InvalidParams(e.to_string()))
}

/// A directory the client named: absolute, or refused.
fn absolute(cwd: PathBuf) -> Result<PathBuf, VendorFailure> {
    if cwd.is_absolute() {
        Ok(cwd)
    } else {
        Err(VendorFailure::InvalidParams(format!(
            "`cwd` must be an absolute path, not `{}`",
            cwd.display()
        )))
    }
}

/// Answers `method`, or says it is not one of these.
pub(super) async fn answer(
    on: &OnServer,
    shared: Option<&AppServer>,
    method: &str,
    params: &Value,
    session: Option<&VendorSession>,
) -> Result<Value, VendorFailure> {
    match method {
        "_codex/hooks/list" => {
            let cwd = absolute(read::<HooksList>(params)?.cwd)?;
            let entry = on
                .ask(async |s| hooks::entry(&s.connect_or_say().await?.rpc, &cwd).await)
                .await;
            entry.map_err(VendorFailure::Failed)
        }
        "_codex/hooks/trust" => {
            let asked: HooksTrust = read(params)?;
            let cwd = absolute(asked.cwd)?;
            if asked.hooks.is_empty() {
                return Err(VendorFailure::InvalidParams(
                    "`hooks` is empty; name at least one hook".into(),
                ));
            }
            let wanted: Vec<(String, String)> =
                asked.hooks.into_iter().map(|h| (h.key, h.current_hash)).collect();
            let done = on
                .ask(async |s| hooks::trust(&s.connect_or_say().await?.rpc, &cwd, &wanted).await)
                .await;
            done.map(|_| json!({ "trusted": true }))
                .map_err(VendorFailure::Failed)
        }
        "_session/async_task/stop" => {
            let id = read::<TaskStop>(params)?.async_task_id;
            if id.trim().is_empty() {
                return Err(VendorFailure::InvalidParams("`asyncTaskId` is blank".into()));
            }
            let Some(session) = session else {
                return Err(VendorFailure::InvalidParams("`sessionId` is missing".into()));
            };
            stop_task(shared, session, id.trim()).await
        }
        _ => Err(VendorFailure::NotMine(method.to_owned())),
    }
}

/// Stops the session's background terminal `id` (its tool call id, Codex's item id or process
/// id): `{stopped}`. On exec, and in a session with no thread yet, there is none to stop.
async fn stop_task(
    shared: Option<&AppServer>,
    session: &VendorSession,
    id: &str,
) -> Result<Value, VendorFailure> {
    let (Some(server), Some(thread)) = (shared, session.thread_id.as_deref()) else {
        return Ok(json!({ "stopped": false }));
    };
    // No server running: none of its commands runs either (nothing is started to say so).
    let Some(conn) = server.live() else {
        return Ok(json!({ "stopped": false }));
    };
    match terminals::stop(&conn.rpc, thread, id).await {
        Ok(Stopped::Yes(_)) => Ok(json!({ "stopped": true })),
        Ok(Stopped::Ended(_) | Stopped::Unknown) => Ok(json!({ "stopped": false })),
        Err(why) => Err(VendorFailure::Failed(why)),
    }
}
