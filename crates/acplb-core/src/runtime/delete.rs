//! `session/delete`: a session open here is closed first (its turn cancelled, its provider side
//! stopped, what it told the registry written), then its folder and registry entry are deleted
//! on the blocking pool (`sessions/delete.rs`: refused when another acplb has it open), then
//! the provider deletes its conversation (the Codex thread).

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{DeleteSessionResponse, SessionId};

use super::durable::{self, READ_LIMIT};
use super::store::Store;
use crate::error::Reason;
use crate::error::wire::{self, reply};
use crate::sessions::delete::{self, DeleteError};
use crate::sessions::hold::HoldError;

/// The `_meta` key of a deletion's answer saying why the provider's conversation was kept.
pub const THREAD_KEPT: &str = "acplb/threadKept";

/// The `_meta` key of a deletion's answer when there was no such session (the request still
/// succeeds, as ACP asks: a retried or repeated delete is not an error).
pub const NOT_FOUND: &str = "acplb/notFound";

impl Store {
    pub(super) fn delete_session(&mut self, id: SessionId, responder: Responder<DeleteSessionResponse>) {
        let Some(durability) = self.options.durability.clone() else {
            reply(responder.respond_with_error(wire::invalid_params(
                Reason::NotKept,
                "this acplb keeps no sessions (it has no state directory), so it has none to delete",
            )));
            return;
        };
        if self.opening.contains_key(&id) {
            reply(responder.respond_with_error(wire::invalid_params(
                Reason::SessionOpening,
                format!("session `{id}` is still opening; delete it once it has opened"),
            )));
            return;
        }
        let open = self.close_for(&id);
        let provider = self.provider.clone();
        tokio::task::spawn_local(async move {
            if let Some(open) = open {
                // What the closed session told the registry lands before its entry goes.
                open.closed(&durability).await;
            }
            let (state, owned) = (durability.state_dir.clone(), id.to_string());
            let deleted = durable::off_loop("deleting the session", READ_LIMIT, move || {
                match delete::delete(&state, &owned) {
                    Ok(deleted) => Ok(Ok(deleted)),
                    // ACP: deleting what is not there succeeds (a retry, a second editor);
                    // `_meta` says there was nothing.
                    Err(e @ DeleteError::Unknown { .. }) => Ok(Err(e.to_string())),
                    Err(e) => Err(refusal(&e)),
                }
            })
            .await;
            let deleted = match deleted {
                Ok(Ok(d)) => d,
                Ok(Err(nothing)) => {
                    tracing::info!(session = %id, "session/delete of a session acplb does not keep");
                    let mut meta = serde_json::Map::new();
                    meta.insert(NOT_FOUND.into(), nothing.into());
                    return reply(responder.respond(DeleteSessionResponse::new().meta(meta)));
                }
                Err(e) => return reply(responder.respond_with_error(e)),
            };
            tracing::info!(session = %id, folder = deleted.folder, listed = deleted.listed, "session deleted");
            let mut response = DeleteSessionResponse::new();
            if let Some(thread) = deleted.thread_id
                && let Err(e) = provider.delete_thread(&thread).await
            {
                tracing::warn!(session = %id, %thread, error = %e, "the provider's conversation was not deleted");
                let mut meta = serde_json::Map::new();
                meta.insert(THREAD_KEPT.into(), e.to_string().into());
                response = response.meta(meta);
            }
            reply(responder.respond(response));
        });
    }
}

/// The JSON-RPC error for a deletion that did not happen.
fn refusal(e: &DeleteError) -> agent_client_protocol::Error {
    match e {
        DeleteError::BadId(_) => wire::invalid_params(Reason::InvalidParams, e.to_string()),
        DeleteError::Unknown { .. } => wire::invalid_params(Reason::UnknownSession, e.to_string()),
        DeleteError::Held(HoldError::Elsewhere { .. }) => {
            wire::invalid_params(Reason::SessionHeld, format!("cannot delete it: {e}"))
        }
        DeleteError::Held(_) => wire::invalid_params(Reason::SessionOpening, e.to_string()),
        DeleteError::Folder { .. } | DeleteError::Registry(_) => {
            wire::internal(Reason::Storage, &e.to_string())
        }
    }
}
