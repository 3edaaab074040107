//! `_session/batch_get` (the TS codex-acp's vendor method, ADR 0043): the list rows of the
//! sessions named, by id, archived or not, without paging through `session/list` and without
//! loading any. Unknown ids are left out; the rows come in the order asked. One registry read,
//! off the runtime thread.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::SessionInfo;
use agent_client_protocol::{Error, JsonRpcRequest, JsonRpcResponse};
use serde::{Deserialize, Serialize};

use super::store::Store;
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::sessions::registry::{Registry, Status};

/// The most ids one request may name.
pub(crate) const MAX_IDS: usize = 200;

/// `_session/batch_get {sessionIds}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_session/batch_get", response = BatchGetResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BatchGetRequest {
    pub(crate) session_ids: Vec<String>,
}

/// The rows of the sessions found.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcResponse)]
pub(crate) struct BatchGetResponse {
    pub(crate) sessions: Vec<SessionInfo>,
}

/// Why the ids cannot be looked up, in words for the client.
fn refused(ids: &[String]) -> Option<String> {
    if ids.len() > MAX_IDS {
        return Some(format!(
            "`sessionIds` names {} sessions; ask for at most {MAX_IDS} at a time",
            ids.len()
        ));
    }
    if ids.iter().any(|id| id.trim().is_empty()) {
        return Some("`sessionIds` must not contain a blank id".into());
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
        return Some(format!("`sessionIds` names `{twice}` twice; each id once"));
    }
    None
}

impl Store {
    pub(super) fn batch_get(&self, req: BatchGetRequest, responder: Responder<BatchGetResponse>) {
        if let Some(why) = refused(&req.session_ids) {
            return reply(responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, why)));
        }
        let Some(durability) = self.options.durability.clone() else {
            return reply(responder.respond(BatchGetResponse { sessions: Vec::new() }));
        };
        tokio::task::spawn_local(async move {
            let registry = Registry::new(&durability.state_dir);
            let ids = req.session_ids;
            let read = tokio::task::spawn_blocking(move || rows(&registry, &ids)).await;
            match read {
                Ok(Ok(sessions)) => reply(responder.respond(BatchGetResponse { sessions })),
                Ok(Err(e)) => reply(responder.respond_with_error(e)),
                Err(e) => reply(responder.respond_with_error(wire::internal(
                    Reason::Internal,
                    &format!("reading the sessions failed: {e}"),
                ))),
            }
        });
    }
}

fn rows(registry: &Registry, ids: &[String]) -> Result<Vec<SessionInfo>, Error> {
    let listing = registry.all().map_err(|e| {
        wire::internal(
            Reason::Storage,
            &format!("reading the session registry failed: {e}"),
        )
    })?;
    let mut found: std::collections::HashMap<String, _> = listing
        .into_entries()
        .into_iter()
        .filter(|e| e.effective_status() != Status::Unknown)
        .map(|e| (e.session_id.clone(), e))
        .collect();
    Ok(ids
        .iter()
        .filter_map(|id| found.remove(id))
        .map(super::durable::row)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_repeated_and_too_many_ids_are_refused_with_the_reason() {
        assert!(refused(&["a".into(), "b".into()]).is_none());
        assert!(refused(&[]).is_none());
        assert!(refused(&[" ".into()]).unwrap().contains("blank"));
        assert!(refused(&["a".into(), "a".into()]).unwrap().contains("`a` twice"));
        let many: Vec<String> = (0..=MAX_IDS).map(|i| i.to_string()).collect();
        assert!(refused(&many).unwrap().contains("at most 200"));
    }
}
