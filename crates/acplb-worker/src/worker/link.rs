//! The worker's side of its in-process ACP connection: the worker is the client (the "editor")
//! of its own server, so a worker session is an ordinary acplb session — journaled, listed,
//! loadable in an editor — and the runtime needs no second way in (ADR 0014).

use std::path::Path;

use acplb_core::error::Reason;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, ListSessionsRequest, LoadSessionRequest, NewSessionRequest,
    PromptRequest, RequestPermissionRequest, SessionConfigOptionValue, SessionId,
    SetSessionConfigOptionRequest, StopReason,
};
use agent_client_protocol::{Agent, Error};

pub(crate) use acplb_core::client::Answers;

/// How one turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TurnEnd {
    /// The final answer.
    Answered(String),
    /// The turn failed (the model, a limit): the sender is told why.
    Failed(String),
    /// Codex itself went away mid-turn: the worker restarts, the message stays unread.
    Crashed(String),
    /// Stopped (shutdown, restart): the message stays unread.
    Cancelled,
}

/// The worker's connection to its server.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    cx: ConnectionTo<Agent>,
    answers: Answers,
}

impl Link {
    pub(crate) fn new(cx: ConnectionTo<Agent>, answers: Answers) -> Self {
        Self { cx, answers }
    }

    pub(crate) async fn initialize(&self) -> Result<(), Error> {
        let init = InitializeRequest::new(ProtocolVersion::V1);
        self.cx.send_request(init).block_task().await.map(|_| ())
    }

    /// Opens the worker's session: `previous` loaded when there is one (the conversation goes
    /// on), else a new one.
    pub(crate) async fn open(&self, cwd: &Path, previous: Option<&str>) -> Result<SessionId, Error> {
        if let Some(id) = previous {
            let load = LoadSessionRequest::new(SessionId::new(id), cwd);
            match self.cx.send_request(load).block_task().await {
                Ok(_) => return Ok(SessionId::new(id)),
                Err(e) => {
                    tracing::warn!(session = id, error = %e.message, "cannot load the worker's session; starting a new one");
                }
            }
        }
        let created = self
            .cx
            .send_request(NewSessionRequest::new(cwd))
            .block_task()
            .await?;
        Ok(created.session_id)
    }

    /// A new session that forks `source` (its conversation so far, on a thread of its own):
    /// a further lane of a `concurrent` worker.
    pub(crate) async fn fork(&self, cwd: &Path, source: &SessionId) -> Result<SessionId, Error> {
        let mut meta = serde_json::Map::new();
        meta.insert(
            acplb_core::runtime::FORK_OF.to_owned(),
            serde_json::Value::String(source.to_string()),
        );
        let created = self
            .cx
            .send_request(NewSessionRequest::new(cwd).meta(meta))
            .block_task()
            .await?;
        Ok(created.session_id)
    }

    /// Sets one config option (mode, model).
    pub(crate) async fn set_option(&self, session: &SessionId, id: &str, value: &str) -> Result<(), Error> {
        let req = SetSessionConfigOptionRequest::new(
            session.clone(),
            id.to_owned(),
            SessionConfigOptionValue::value_id(value.to_owned()),
        );
        self.cx.send_request(req).block_task().await.map(|_| ())
    }

    /// A request the server answers without Codex: is the worker's runtime alive?
    pub(crate) async fn ping(&self) -> Result<(), Error> {
        self.cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await
            .map(|_| ())
    }

    /// One turn.
    pub(crate) async fn prompt(&self, session: &SessionId, text: String) -> TurnEnd {
        self.answers.start(session);
        let req = PromptRequest::new(session.clone(), vec![ContentBlock::from(text)]);
        let result = self.cx.send_request(req).block_task().await;
        let answer = self.answers.take(session);
        match result {
            Ok(r) if r.stop_reason == StopReason::Cancelled => TurnEnd::Cancelled,
            Ok(r) if r.stop_reason == StopReason::EndTurn => TurnEnd::Answered(answer),
            Ok(r) => {
                let why = serde_json::to_value(r.stop_reason).unwrap_or_default();
                TurnEnd::Answered(format!(
                    "{answer}\n\n(the turn stopped early: {})",
                    why.as_str().unwrap_or("unknown")
                ))
            }
            Err(e) if is_crash(&e) => TurnEnd::Crashed(e.message),
            Err(e) => TurnEnd::Failed(e.message),
        }
    }
}

/// Whether a turn's error says the provider process ended (its reason is `provider_exited`),
/// as opposed to a turn that failed while Codex ran on.
fn is_crash(e: &Error) -> bool {
    Reason::of(e) == Some(Reason::ProviderExited)
}

/// How the worker answers Codex's approval requests: nobody is there to ask, so it declines,
/// and says so in the log. The agent's `mode` decides what runs without asking.
pub(crate) fn decline(
    req: &RequestPermissionRequest,
) -> agent_client_protocol::v1::schema::RequestPermissionResponse {
    use agent_client_protocol::v1::schema::{
        PermissionOptionKind, RequestPermissionOutcome, RequestPermissionResponse, SelectedPermissionOutcome,
    };
    let reject = req
        .options
        .iter()
        .find(|o| matches!(o.kind, PermissionOptionKind::RejectOnce))
        .or_else(|| {
            req.options
                .iter()
                .find(|o| matches!(o.kind, PermissionOptionKind::RejectAlways))
        });
    tracing::warn!(
        session = %req.session_id,
        tool = ?req.tool_call.fields.title,
        "declined an approval request: a worker has nobody to ask (set `mode = \"full-access\"` to run without asking)"
    );
    match reject {
        Some(o) => RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(o.option_id.clone()),
        )),
        None => RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled),
    }
}
