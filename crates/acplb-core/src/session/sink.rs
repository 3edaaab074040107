//! The sink that turns provider updates into `session/update` notifications to the client.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    RequestPermissionOutcome, RequestPermissionRequest, SessionId, SessionNotification, SessionUpdate,
};
use futures::future::LocalBoxFuture;

use crate::plugin::Pipeline;
use crate::provider::{PermissionAnswer, PermissionAsk, SessionSink};
use crate::transport::OutputFlow;

/// Sends updates of one session to the ACP client, through the plugin pipeline.
#[derive(Debug)]
pub struct AcpSink {
    session_id: SessionId,
    cx: ConnectionTo<Client>,
    pipeline: std::rc::Rc<Pipeline>,
    flow: OutputFlow,
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
        }
    }
}

impl SessionSink for AcpSink {
    fn update(&self, update: SessionUpdate) {
        let Some(update) = self.pipeline.on_update(&self.session_id, update) else {
            return;
        };
        match self
            .cx
            .send_notification(SessionNotification::new(self.session_id.clone(), update))
        {
            Ok(()) => self.flow.sent(),
            // The client is gone; the runtime shuts down on its own when the connection ends.
            Err(e) => {
                tracing::debug!(error = %e, "dropping a session update: the client connection is closed");
            }
        }
    }

    fn ready(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(self.flow.ready())
    }

    fn request_permission(&self, ask: PermissionAsk) -> LocalBoxFuture<'_, PermissionAnswer> {
        let request = RequestPermissionRequest::new(self.session_id.clone(), ask.tool_call, ask.options);
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
}
