//! The sink that turns provider updates into `session/update` notifications to the client.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAction, ElicitationFormMode,
    ElicitationSessionScope, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate,
};
use agent_client_protocol::{Client, UntypedMessage};
use futures::future::LocalBoxFuture;

use std::cell::RefCell;
use std::rc::Rc;

use super::file_report::FileChanges;
use super::hold::{Held, Hold};
use super::subagent_wire::{Wire, addressee, wire};
use crate::plugin::Pipeline;
use crate::provider::followers;
use crate::provider::{BesideForm, ElicitAnswer, ElicitAsk, PermissionAnswer, PermissionAsk, SessionSink};
use crate::sessions::journal::Journal;
use crate::sessions::registry::Tracked;
use crate::transport::{OutputFlow, json_size};
use agent_client_protocol::schema::MaybeUndefined;

/// Sends updates of one session to the ACP client, through the plugin pipeline.
#[derive(Debug, Clone)]
pub struct AcpSink {
    session_id: SessionId,
    cx: ConnectionTo<Client>,
    pipeline: std::rc::Rc<Pipeline>,
    flow: OutputFlow,
    journal: Option<Rc<Journal>>,
    registry: Option<Tracked>,
    hold: Option<Rc<Hold>>,
    /// Whether the client declared form elicitation.
    forms: bool,
    /// The files the turn's edits change, when the client may ask for a report of them.
    file_changes: Option<Rc<RefCell<FileChanges>>>,
    /// Whether the client takes subagent sessions in AIR's shapes (`subagent_wire.rs`).
    air_subagents: bool,
}

impl AcpSink {
    /// A sink for `session_id` on the connection `cx`.
    pub fn new(
        session_id: SessionId,
        cx: ConnectionTo<Client>,
        pipeline: std::rc::Rc<Pipeline>,
        flow: OutputFlow,
    ) -> Self {
        Self {
            session_id,
            cx,
            pipeline,
            flow,
            journal: None,
            registry: None,
            hold: None,
            forms: false,
            file_changes: None,
            air_subagents: false,
        }
    }

    /// Sends subagent sessions in AIR's shapes (the client takes them so, ADR 0055).
    #[must_use]
    pub(crate) fn with_air_subagents(mut self, air: bool) -> Self {
        self.air_subagents = air;
        self
    }

    /// Puts forms to the client (it declared form elicitation).
    #[must_use]
    pub(crate) fn with_forms(mut self, forms: bool) -> Self {
        self.forms = forms;
        self
    }

    /// Also records what it sends in `journal`, and the thread and title in the registry.
    #[must_use]
    pub fn with_journal(mut self, journal: Option<Rc<Journal>>, registry: Option<Tracked>) -> Self {
        self.journal = journal;
        self.registry = registry;
        self
    }

    /// Shows every update it sends to `changes` (AIR's file change report).
    #[must_use]
    pub(crate) fn with_file_changes(mut self, changes: Option<Rc<RefCell<FileChanges>>>) -> Self {
        self.file_changes = changes;
        self
    }

    /// Sends `update` beside the session's record: neither plugins nor the journal see it (a
    /// replay does not repeat it), but a running replay holds it like any update.
    pub(crate) fn aside(&self, update: SessionUpdate) {
        self.send_update(SessionNotification::new(self.session_id.clone(), update));
    }

    /// Holds its updates back while a load of the session replays its history.
    #[must_use]
    pub(crate) fn with_hold(mut self, hold: Rc<Hold>) -> Self {
        self.hold = Some(hold);
        self
    }
}

impl SessionSink for AcpSink {
    fn update(&self, mut update: SessionUpdate) {
        // Updates ACP has no type for ride on this one: off before anyone sees it (ADR 0051).
        let followers = followers::take(&mut update);
        let Some(update) = self.pipeline.on_update(&self.session_id, update) else {
            return;
        };
        // Journaled with its mark, so a replay sends it to its subagent session again.
        if let Some(journal) = &self.journal {
            journal.update(&update);
        }
        if let Some(changes) = &self.file_changes {
            changes.borrow_mut().observe(&update);
        }
        if let (Some(registry), SessionUpdate::SessionInfoUpdate(info)) = (&self.registry, &update)
            && let MaybeUndefined::Value(title) = &info.title
        {
            registry.title(title.clone());
        }
        // Followers go where their update goes (a child's session, ADR 0055).
        let mut to = self.session_id.clone();
        match wire(&self.session_id, update, self.air_subagents) {
            Wire::Typed(notification) => {
                to.clone_from(&notification.session_id);
                self.send_update(*notification);
            }
            Wire::Untyped(message) => self.send_follower(message),
            Wire::Nothing => {}
        }
        for follower in followers {
            let params = serde_json::json!({ "sessionId": &to, "update": follower });
            match UntypedMessage::new("session/update", params) {
                Ok(message) => self.send_follower(message),
                Err(e) => tracing::debug!(error = %e, "an update ACP has no type for could not be built"),
            }
        }
    }

    fn thread_started(&self, id: &str) {
        if let Some(journal) = &self.journal {
            journal.thread(id);
        }
        if let Some(registry) = &self.registry {
            registry.thread(id);
        }
    }

    fn ready(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(async {
            if let Some(hold) = &self.hold {
                hold.released().await;
            }
            self.flow.ready().await;
        })
    }

    fn request_permission(&self, ask: PermissionAsk) -> LocalBoxFuture<'_, PermissionAnswer> {
        let session = match &ask.session {
            Some(child) => SessionId::new(addressee(child, self.air_subagents)),
            None => self.session_id.clone(),
        };
        let request = RequestPermissionRequest::new(session, ask.tool_call, ask.options).meta(ask.meta);
        // Behind the same gate as updates: a flood of asks waits for the client too.
        self.flow.sent(json_size(&request));
        let sent = self.cx.send_request(request);
        Box::pin(async move {
            match sent.block_task().await {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => {
                        PermissionAnswer::Selected(selected.option_id.to_string())
                    }
                    RequestPermissionOutcome::Cancelled => PermissionAnswer::Cancelled,
                    _ => PermissionAnswer::Unanswered("an answer of a kind acplb does not know".into()),
                },
                // An error reply, or a client that went away: a rejection.
                Err(e) => PermissionAnswer::Unanswered(e.message),
            }
        })
    }

    fn can_elicit(&self) -> bool {
        self.forms
    }

    fn elicit(&self, ask: ElicitAsk) -> LocalBoxFuture<'_, ElicitAnswer> {
        if !self.forms {
            return Box::pin(std::future::ready(ElicitAnswer::Unanswered(
                "the client declared no form elicitation".into(),
            )));
        }
        let sent = self.cx.send_request(self.form_request(ask));
        Box::pin(async move { read_answer(sent.block_task().await) })
    }

    fn elicit_beside(&self, ask: ElicitAsk) -> Option<BesideForm> {
        if !self.forms {
            return None;
        }
        let sent = self.cx.send_request(self.form_request(ask));
        let handle = sent.cancellation_handle();
        Some(BesideForm {
            answer: Box::pin(async move { read_answer(sent.block_task().await) }),
            withdraw: Box::new(move || {
                if let Err(e) = handle.cancel() {
                    tracing::debug!(error = %e, "could not withdraw a form: the client connection is closed");
                }
            }),
            later: Box::new(self.clone()),
        })
    }
}

impl AcpSink {
    /// Sends `notification`, or holds it while a replay runs.
    fn send_update(&self, notification: SessionNotification) {
        match &self.hold {
            Some(hold) if hold.holding() => hold.keep(Held::Update(Box::new(notification))),
            _ => send_counted(&self.cx, &self.flow, notification),
        }
    }

    /// Sends an update ACP has no type for, or holds it while a replay runs.
    fn send_follower(&self, message: UntypedMessage) {
        match &self.hold {
            Some(hold) if hold.holding() => hold.keep(Held::Follower(message)),
            _ => send_counted(&self.cx, &self.flow, message),
        }
    }

    /// The `elicitation/create` request of a form, counted in the output flow like updates.
    fn form_request(&self, ask: ElicitAsk) -> CreateElicitationRequest {
        let scope = ElicitationSessionScope::new(self.session_id.clone()).tool_call_id(ask.tool_call_id);
        let request = CreateElicitationRequest::new(ElicitationFormMode::new(scope, ask.schema), ask.message);
        self.flow.sent(json_size(&request));
        request
    }
}

/// The editor's answer to a form, as the provider reads it.
fn read_answer(response: Result<CreateElicitationResponse, agent_client_protocol::Error>) -> ElicitAnswer {
    match response {
        Ok(response) => match response.action {
            ElicitationAction::Accept(accepted) => {
                let content = accepted.content.unwrap_or_default();
                match serde_json::to_value(content) {
                    Ok(serde_json::Value::Object(map)) => ElicitAnswer::Accepted(map),
                    _ => ElicitAnswer::Unanswered("an answer acplb could not read".into()),
                }
            }
            ElicitationAction::Decline => ElicitAnswer::Declined,
            ElicitationAction::Cancel => ElicitAnswer::Cancelled,
            _ => ElicitAnswer::Unanswered("an answer of a kind acplb does not know".into()),
        },
        Err(e) => ElicitAnswer::Unanswered(e.message),
    }
}

/// Sends one update, counted in `flow` (by its size) until the stdout writer has written it.
pub(crate) fn send_counted<N>(cx: &ConnectionTo<Client>, flow: &OutputFlow, notification: N)
where
    N: agent_client_protocol::JsonRpcNotification + serde::Serialize,
{
    let bytes = json_size(&notification);
    // Counted before it is handed over, so the writer never counts it first.
    flow.sent(bytes);
    if let Err(e) = cx.send_notification(notification) {
        flow.unsent(bytes);
        // The client is gone; the runtime shuts down on its own when the connection ends.
        tracing::debug!(error = %e, "dropping a session update: the client connection is closed");
    }
}
