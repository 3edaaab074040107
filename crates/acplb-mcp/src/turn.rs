//! One turn of a tool call: the prompt sent to the session, its updates turned into MCP
//! progress notifications (when the caller sent a progress token), Codex's approval requests
//! asked through MCP elicitation (or declined, with the reason kept for the result), and the
//! call's cancel or time limit stopping the turn as an editor's `session/cancel` would.

use std::time::Duration;

use acplb_core::CancellationToken;
use acplb_core::client::Answers;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PermissionOptionKind, PromptRequest, RequestPermissionRequest,
    SessionId, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Error};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::json;

use crate::hub::{Heard, Hub, choose, decline};

/// What a call needs to run its turn.
pub(crate) struct TurnCall<'a> {
    pub(crate) cx: &'a ConnectionTo<Agent>,
    pub(crate) hub: &'a Hub,
    pub(crate) answers: &'a Answers,
    pub(crate) peer: &'a Peer<RoleServer>,
    pub(crate) progress: Option<ProgressToken>,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) limit: Duration,
    /// Decline approval requests without asking (`approval-policy = "never"`).
    pub(crate) never_ask: bool,
}

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The final answer (`note`: the turn stopped early, or approvals declined).
    Answered { text: String, notes: Vec<String> },
    /// The caller cancelled: what was produced so far.
    Cancelled { partial: String },
    /// The time limit ran out: what was produced so far.
    TimedOut { partial: String, limit: Duration },
    /// The turn failed (Codex died: the message has its exit status and stderr's last lines).
    Failed { message: String, partial: String },
}

/// Why the call stops the turn itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Cancel,
    Limit,
}

impl TurnCall<'_> {
    /// Runs one turn of `session` with `text`.
    pub(crate) async fn run(&self, session: &SessionId, text: String) -> Ended {
        let (route, mut heard) = self.hub.listen(&session.to_string()).await;
        self.answers.start(session);
        let request = PromptRequest::new(session.clone(), vec![ContentBlock::from(text)]);
        let prompt = self.cx.send_request(request).block_task();
        tokio::pin!(prompt);
        let deadline = tokio::time::sleep(self.limit);
        tokio::pin!(deadline);
        let mut stopped: Option<Stop> = None;
        let mut notes = Vec::new();
        let mut step = 0u32;
        let result = loop {
            tokio::select! {
                result = &mut prompt => break result,
                Some(h) = heard.recv() => match h {
                    Heard::Update(n) => self.progress(&n, &mut step).await,
                    Heard::Permission(req, responder) => {
                        if let Some(note) = self.ask(req, responder).await {
                            notes.push(note);
                        }
                    }
                    Heard::Form(req, responder) => {
                        if let Some(note) = crate::form::relay(self.peer, req, responder).await {
                            notes.push(note);
                        }
                    }
                },
                () = self.cancel.cancelled(), if stopped.is_none() => {
                    stopped = Some(Stop::Cancel);
                    self.stop(session);
                }
                () = &mut deadline, if stopped.is_none() => {
                    stopped = Some(Stop::Limit);
                    self.stop(session);
                }
            }
        };
        drop(route);
        let text = self.answers.take(session);
        conclude(result, text, notes, stopped, self.limit)
    }

    fn stop(&self, session: &SessionId) {
        if let Err(e) = self
            .cx
            .send_notification(CancelNotification::new(session.clone()))
        {
            tracing::warn!(error = %e.message, "cannot cancel the turn");
        }
    }

    /// A progress notification for an update worth showing, when the caller asked for them.
    async fn progress(&self, n: &SessionNotification, step: &mut u32) {
        let Some(token) = &self.progress else { return };
        let message = match &n.update {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                ContentBlock::Text(t) => t.text.clone(),
                _ => return,
            },
            SessionUpdate::ToolCall(call) => format!("tool: {}", call.title),
            SessionUpdate::ToolCallUpdate(u) => match (&u.fields.status, &u.fields.title) {
                (Some(status), title) => format!(
                    "tool {}: {}",
                    title.as_deref().unwrap_or(&u.tool_call_id.to_string()),
                    serde_json::to_value(status)
                        .unwrap_or_default()
                        .as_str()
                        .unwrap_or("updated")
                ),
                _ => return,
            },
            _ => return,
        };
        *step += 1;
        let param = serde_json::from_value::<ProgressNotificationParam>(json!({
            "progressToken": token,
            "progress": *step,
            "message": message,
        }));
        match param {
            Ok(p) => {
                if let Err(e) = self.peer.notify_progress(p).await {
                    tracing::debug!(error = %e, "cannot send a progress notification");
                }
            }
            Err(e) => tracing::warn!(error = %e, "a progress notification did not serialise"),
        }
    }

    /// Codex asks before it acts: the caller's user decides through elicitation when the client
    /// can elicit; else the request is declined and the returned note says so.
    async fn ask(
        &self,
        req: RequestPermissionRequest,
        responder: Responder<agent_client_protocol::v1::schema::RequestPermissionResponse>,
    ) -> Option<String> {
        let what = req
            .tool_call
            .fields
            .title
            .clone()
            .unwrap_or_else(|| "an action".into());
        let can_elicit = !self.peer.supported_elicitation_modes().is_empty();
        let (answer, note) = if self.never_ask {
            (
                decline(&req),
                Some(format!("declined `{what}`: the approval policy is `never`")),
            )
        } else if !can_elicit {
            (
                decline(&req),
                Some(format!(
                    "declined `{what}`: Codex asked for approval and this MCP client cannot be asked (no elicitation support)"
                )),
            )
        } else {
            match self.elicit(&what).await {
                Ok(kinds) => {
                    let declined = kinds[0] == PermissionOptionKind::RejectOnce;
                    let note = declined.then(|| format!("declined `{what}`: the user said no"));
                    (choose(&req, kinds), note)
                }
                Err(e) => (
                    decline(&req),
                    Some(format!("declined `{what}`: asking the user failed: {e}")),
                ),
            }
        };
        if let Err(e) = responder.respond(answer) {
            tracing::warn!(error = %e.message, "cannot answer an approval request");
        }
        note
    }

    async fn elicit(&self, what: &str) -> Result<&'static [PermissionOptionKind], String> {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": format!("Codex asks to run: {what}"),
            "requestedSchema": {
                "type": "object",
                "properties": {"decision": {
                    "type": "string",
                    "title": "Allow?",
                    "enum": ["accept", "accept-for-session", "decline"],
                }},
                "required": ["decision"],
            },
        }))
        .map_err(|e| e.to_string())?;
        let result: ElicitResult = self
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| e.to_string())?;
        let decision = result
            .content
            .as_ref()
            .and_then(|c| c.get("decision"))
            .and_then(serde_json::Value::as_str);
        Ok(match (result.action, decision) {
            (ElicitationAction::Accept, Some("accept-for-session")) => {
                &[PermissionOptionKind::AllowAlways, PermissionOptionKind::AllowOnce]
            }
            (ElicitationAction::Accept, Some("accept") | None) => {
                &[PermissionOptionKind::AllowOnce, PermissionOptionKind::AllowAlways]
            }
            _ => &[
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways,
            ],
        })
    }
}

fn conclude(
    result: Result<agent_client_protocol::v1::schema::PromptResponse, Error>,
    text: String,
    mut notes: Vec<String>,
    stopped: Option<Stop>,
    limit: Duration,
) -> Ended {
    match (result, stopped) {
        (Err(e), _) => Ended::Failed {
            message: e.message,
            partial: text,
        },
        (Ok(_), Some(Stop::Limit)) => Ended::TimedOut { partial: text, limit },
        (Ok(_), Some(Stop::Cancel)) => Ended::Cancelled { partial: text },
        (Ok(r), None) => {
            if r.stop_reason != StopReason::EndTurn {
                let why = serde_json::to_value(r.stop_reason).unwrap_or_default();
                notes.push(format!(
                    "the turn stopped early: {}",
                    why.as_str().unwrap_or("unknown")
                ));
            }
            Ended::Answered { text, notes }
        }
    }
}
