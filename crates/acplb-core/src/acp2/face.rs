//! The v2 client's requests, each served by the v1 runtime (ADR 0048): forwarded with the
//! shapes `requests.rs` gives, except a prompt, answered as soon as it is sent on, its turn's
//! end told by a `state_update`.

use std::sync::{Arc, Mutex, OnceLock};

use agent_client_protocol::{Agent, Client, UntypedMessage};
use serde_json::{Value, json};

use super::requests::{self, Route};
use super::state::Sessions;
use crate::error::Reason;
use crate::error::wire;

/// The v1 connection to the runtime.
pub(super) type Inner = agent_client_protocol::v1::ConnectionTo<Agent>;
/// The v2 connection to the client.
pub(super) type Outer = agent_client_protocol::v2::ConnectionTo<Client>;
/// A v2 request's responder.
pub(super) type Responder = agent_client_protocol::v2::Responder<Value>;

/// Both connections and what the face knows of the sessions.
#[derive(Debug, Default)]
pub(super) struct Face {
    inner: OnceLock<Inner>,
    outer: OnceLock<Outer>,
    sessions: Mutex<Sessions>,
}

impl Face {
    pub(super) fn set_inner(&self, inner: Inner) {
        self.inner.set(inner).ok();
    }

    pub(super) fn set_outer(&self, outer: &Outer) {
        if self.outer.get().is_none() {
            self.outer.set(outer.clone()).ok();
        }
    }

    pub(super) fn outer(&self) -> Option<&Outer> {
        self.outer.get()
    }

    fn inner(&self) -> Result<&Inner, agent_client_protocol::Error> {
        self.inner
            .get()
            .ok_or_else(|| wire::internal(Reason::Stopping, "acplb's runtime is not connected"))
    }

    /// `f` with the sessions (a poisoned lock still holds usable bookkeeping).
    pub(super) fn with_sessions<T>(&self, f: impl FnOnce(&mut Sessions) -> T) -> T {
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut sessions)
    }

    /// Sends `session/update` with the v2 `update` for `session`. The shapes are v2's by
    /// construction (`updates.rs`, checked against the v2 schema by its tests); the update is
    /// not parsed again here, which would link v2's whole update schema into every acplb
    /// (0.5 MB of `.text`, ADR 0048).
    pub(super) fn update(&self, session: &str, update: Value) {
        if update.get("sessionUpdate").and_then(Value::as_str).is_none() {
            tracing::debug!(%update, "an update without a kind is left out");
            return;
        }
        let mut params = serde_json::Map::new();
        params.insert("sessionId".into(), json!(session));
        params.insert("update".into(), update);
        self.notify("session/update", Value::Object(params));
    }

    /// Sends the notification `method` to the client.
    pub(super) fn notify(&self, method: &str, params: Value) {
        let Some(outer) = self.outer() else {
            return;
        };
        match UntypedMessage::new(method, params) {
            Ok(message) => wire::reply(outer.send_notification(message)),
            Err(e) => tracing::debug!(error = %e, method, "a notification could not be built"),
        }
    }

    /// Sends the client's notification `n` on to the runtime.
    pub(super) fn notify_inner(&self, n: UntypedMessage) {
        match self.inner() {
            Ok(inner) => wire::reply(inner.send_notification(n)),
            Err(e) => tracing::debug!(error = %e, "a notification arrived before the runtime was connected"),
        }
    }

    /// Sends `session/update` with the `state_update` `state`, if there is one.
    pub(super) fn state(&self, session: &str, state: Option<Value>) {
        if let Some(Value::Object(mut state)) = state {
            state.insert("sessionUpdate".into(), json!("state_update"));
            self.update(session, Value::Object(state));
        }
    }
}

/// Serves the v2 request `method` (never waiting: answers come through callbacks).
pub(super) fn request(face: &Arc<Face>, method: &str, params: Value, responder: Responder) {
    let sent = match requests::route(method) {
        Route::Initialize => forward_with(
            face,
            "initialize",
            requests::initialize(&params),
            responder,
            |_, r| Ok(requests::initialized(&r)),
        ),
        Route::Prompt => prompt(face, &params, responder),
        Route::Resume => match requests::resume(params) {
            Ok((v1, params)) => {
                let id = named(&params);
                forward_with(face, v1, params, responder, move |face, r| {
                    // v2 asks for the state after any replay and before the answer.
                    let state = face.with_sessions(|s| s.snapshot(&id));
                    face.state(&id, Some(state));
                    Ok(requests::setup(r))
                })
            }
            Err(why) => responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, why)),
        },
        Route::Forward { method: v1, shape } => match requests::params(shape, params) {
            Ok(params) => {
                let named = named(&params);
                forward_with(face, v1, params, responder, move |face, r| {
                    note_sessions(face, v1, &named, &r);
                    Ok(requests::result(shape, r))
                })
            }
            Err(why) => responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, why)),
        },
        Route::Unknown if method.starts_with('_') => {
            forward_with(face, method, params, responder, |_, r| Ok(r))
        }
        Route::Refused(why) => responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, why)),
        Route::Unknown => responder.respond_with_error(wire::method_not_found(method)),
    };
    wire::reply(sent);
}

/// The session a request's params name (empty if none).
pub(super) fn named(params: &Value) -> String {
    params
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Notes the sessions a forwarded request (with the params' session `named`) set up or ended.
fn note_sessions(face: &Face, v1: &str, named: &str, result: &Value) {
    match v1 {
        "session/new" | "session/fork" => {
            if let Some(id) = result.get("sessionId").and_then(Value::as_str) {
                face.with_sessions(|s| s.opened(id));
            }
        }
        "session/close" | "session/delete" => face.with_sessions(|s| s.closed(named)),
        _ => {}
    }
}

/// Sends the v1 request `method` and answers `responder` with `shape` of its result.
fn forward_with(
    face: &Arc<Face>,
    method: &str,
    params: Value,
    responder: Responder,
    shape: impl FnOnce(&Face, Value) -> Result<Value, agent_client_protocol::Error> + Send + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let inner = face.inner()?;
    let message = UntypedMessage::new(method, params)?;
    let for_result = face.clone();
    inner
        .send_request(message)
        .on_receiving_result(async move |result| {
            let answered = result.and_then(|r| shape(&for_result, r));
            wire::reply(responder.respond_with_result(answered));
            Ok(())
        })
}

/// `session/prompt`: refused at once for a session not set up here; otherwise the turn starts
/// (`running`), the user's message is echoed with its id, the request is answered with that id,
/// and the v1 prompt's end becomes the `idle` state with its stop reason.
fn prompt(
    face: &Arc<Face>,
    params: &Value,
    responder: Responder,
) -> Result<(), agent_client_protocol::Error> {
    let session = named(params);
    // A subagent's session takes no prompt (its parent's agent directs it): said at once, with
    // no state of a turn that never runs.
    let child = crate::provider::route::parent_of(&session).is_some();
    if child || !face.with_sessions(|s| s.knows(&session)) {
        return responder.respond_with_error(wire::unknown_session(&session));
    }
    let Some(blocks) = params["prompt"].as_array().filter(|b| !b.is_empty()) else {
        let why = "session/prompt needs a non-empty `prompt` array of content blocks";
        return responder.respond_with_error(wire::invalid_params(Reason::InvalidParams, why));
    };
    let inner = face.inner()?;
    let message = UntypedMessage::new("session/prompt", params)?;
    let message_id = uuid::Uuid::new_v4().to_string();
    face.state(&session, face.with_sessions(|s| s.prompt_started(&session)));
    for block in blocks {
        let echo = json!({"sessionUpdate": "user_message_chunk", "messageId": message_id, "content": block});
        face.update(&session, echo);
    }
    let ended = face.clone();
    let id = session.clone();
    inner.send_request(message).on_receiving_result(async move |result| {
        let stop = match result {
            Ok(r) => stopped(&r),
            Err(e) => json!({"stopReason": "error", "error": {"code": e.code, "message": e.message, "data": e.data}}),
        };
        ended.state(&id, ended.with_sessions(|s| s.prompt_ended(&id, stop)));
        Ok(())
    })?;
    responder.respond(json!({ "messageId": message_id }))
}

/// v1's prompt result as v2's idle fields: the stop reason and, where known, the usage.
fn stopped(result: &Value) -> Value {
    let mut stop =
        json!({"stopReason": result.get("stopReason").cloned().unwrap_or_else(|| json!("end_turn"))});
    if let Some(usage) = result.get("usage").filter(|u| u.is_object()) {
        stop["usage"] = usage.clone();
    }
    stop
}
