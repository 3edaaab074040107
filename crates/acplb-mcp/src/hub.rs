//! Where the in-process ACP client's incoming messages go: each `session/update`, permission
//! request and form (`elicitation/create`) to the tool call whose turn runs in that session, by
//! session id. A request of a session with no call waiting (none should come) is declined.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAction, ElicitationMode,
    ElicitationScope, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification,
};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// What a running turn hears from its session.
#[derive(Debug)]
pub(crate) enum Heard {
    Update(SessionNotification),
    Permission(RequestPermissionRequest, Responder<RequestPermissionResponse>),
    Form(CreateElicitationRequest, Responder<CreateElicitationResponse>),
}

/// The routes, by session id, and one turn at a time per session.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hub {
    routes: Arc<Mutex<HashMap<String, UnboundedSender<Heard>>>>,
    /// Held by the call whose turn runs: a second call to the same thread waits until the
    /// first has its answer (a cancelled one too), so what it hears is its own.
    turns: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Hub {
    /// A turn of `session` starts listening, once the session's previous turn (of another
    /// call) has ended; [`Route`] stops it when dropped.
    pub(crate) async fn listen(&self, session: &str) -> (Route, UnboundedReceiver<Heard>) {
        let turn = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(session.to_owned())
            .or_default()
            .clone();
        let held = turn.lock_owned().await;
        let (tx, rx) = unbounded_channel();
        self.lock().insert(session.to_owned(), tx);
        let route = Route {
            hub: self.clone(),
            session: session.to_owned(),
            _held: held,
        };
        (route, rx)
    }

    /// How many turns run now.
    /// Whether `session` is in a call now.
    pub(crate) fn in_call(&self, session: &str) -> bool {
        self.lock().contains_key(session)
    }

    pub(crate) fn running(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn update(&self, n: SessionNotification) {
        if let Some(tx) = self.lock().get(&n.session_id.to_string())
            && tx.send(Heard::Update(n)).is_err()
        {
            tracing::debug!("an update after its turn ended");
        }
    }

    pub(crate) fn permission(
        &self,
        req: RequestPermissionRequest,
        responder: Responder<RequestPermissionResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        let tx = self.lock().get(&req.session_id.to_string()).cloned();
        let Some(tx) = tx else {
            tracing::warn!(session = %req.session_id, "an approval request outside a tool call; declined");
            return responder.respond(decline(&req));
        };
        // The call ended meanwhile: the request comes back and is declined.
        if let Err(tokio::sync::mpsc::error::SendError(Heard::Permission(req, responder))) =
            tx.send(Heard::Permission(req, responder))
        {
            return responder.respond(decline(&req));
        }
        Ok(())
    }

    /// A form Codex asks the user to fill in (a question, an MCP server's form), to the call
    /// whose turn runs in its session; declined when there is none.
    pub(crate) fn form(
        &self,
        req: CreateElicitationRequest,
        responder: Responder<CreateElicitationResponse>,
    ) -> Result<(), agent_client_protocol::Error> {
        let session = form_session(&req);
        let tx = session.and_then(|s| self.lock().get(&s).cloned());
        let Some(tx) = tx else {
            tracing::warn!("a form outside a tool call; declined");
            return responder.respond(CreateElicitationResponse::new(ElicitationAction::Decline));
        };
        if let Err(tokio::sync::mpsc::error::SendError(Heard::Form(_, responder))) =
            tx.send(Heard::Form(req, responder))
        {
            return responder.respond(CreateElicitationResponse::new(ElicitationAction::Decline));
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, UnboundedSender<Heard>>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A turn's route; removed when dropped (the call ended or was cancelled).
#[derive(Debug)]
pub(crate) struct Route {
    hub: Hub,
    session: String,
    _held: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.hub.lock().remove(&self.session);
    }
}

/// The answer that picks the option of `kind` (or, with none such, cancels the request).
pub(crate) fn choose(
    req: &RequestPermissionRequest,
    kinds: &[PermissionOptionKind],
) -> RequestPermissionResponse {
    let option = kinds
        .iter()
        .find_map(|kind| req.options.iter().find(|o| o.kind == *kind));
    RequestPermissionResponse::new(match option {
        Some(o) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(o.option_id.clone())),
        None => RequestPermissionOutcome::Cancelled,
    })
}

/// Declines once (or, with no such option, cancels).
pub(crate) fn decline(req: &RequestPermissionRequest) -> RequestPermissionResponse {
    choose(
        req,
        &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ],
    )
}

/// The session a form belongs to (session-scoped forms are the only ones a turn sends).
fn form_session(req: &CreateElicitationRequest) -> Option<String> {
    match &req.mode {
        ElicitationMode::Form(form) => match &form.scope {
            ElicitationScope::Session(scope) => Some(scope.session_id.to_string()),
            _ => None,
        },
        _ => None,
    }
}
