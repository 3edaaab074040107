//! The in-memory editor: the SDK's client role on one end of an in-process channel, the real
//! `Server` on the other, both on one `LocalSet` of the test's (paused-clock) runtime.

use std::path::Path;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acplb_core::plugin::{NoPlugins, PipelineSource};
use acplb_core::runtime::{Server, ServerOptions};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionConfigOptionValue, SessionId,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Channel, Client, Error, on_receive_notification, on_receive_request};
use tokio::task::JoinHandle;

use crate::scripted::{Scripted, stop_name};
use crate::timeline::{LIMIT, Timeline, within};

/// How the editor answers `session/request_permission`.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    /// Picks the option with this id.
    Pick(&'static str),
    /// The user dismissed the dialog (`outcome: cancelled`).
    Dismiss,
    /// A JSON-RPC error with this message.
    Error(&'static str),
    /// No answer at all; the request stays open.
    Never,
}

/// What the editor's handlers share with the test (they run on the SDK's dispatch loop and
/// must be `Send`).
#[derive(Clone)]
struct Shared {
    timeline: Timeline,
    answer: Arc<Mutex<Answer>>,
    held: Arc<Mutex<Vec<Responder<RequestPermissionResponse>>>>,
    updates: Arc<Mutex<Vec<SessionNotification>>>,
}

impl Shared {
    fn on_update(&self, n: SessionNotification) {
        let entry = match &n.update {
            SessionUpdate::AgentMessageChunk(chunk) => match serde_json::to_value(&chunk.content) {
                Ok(v) => format!("client update: {}", v["text"].as_str().unwrap_or("(not text)")),
                Err(_) => "client update: (unreadable)".to_owned(),
            },
            SessionUpdate::AvailableCommandsUpdate(list) => {
                let names: Vec<&str> = list.available_commands.iter().map(|c| c.name.as_str()).collect();
                format!("client commands: {}", names.join(", "))
            }
            other => {
                let v = serde_json::to_value(other).unwrap_or_default();
                format!("client update: {}", v["sessionUpdate"].as_str().unwrap_or("?"))
            }
        };
        self.updates.lock().unwrap().push(n);
        self.timeline.push(entry);
    }

    fn on_permission(
        &self,
        req: &RequestPermissionRequest,
        responder: Responder<RequestPermissionResponse>,
    ) -> Result<(), Error> {
        let title = req.tool_call.fields.title.clone().unwrap_or_default();
        self.timeline.push(format!("client asked: {title}"));
        let answer = *self.answer.lock().unwrap();
        match answer {
            Answer::Pick(id) => responder.respond(RequestPermissionResponse::new(
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
            )),
            Answer::Dismiss => responder.respond(RequestPermissionResponse::new(
                RequestPermissionOutcome::Cancelled,
            )),
            Answer::Error(message) => responder.respond_with_error(Error::new(-32000, message)),
            Answer::Never => {
                self.held.lock().unwrap().push(responder);
                Ok(())
            }
        }
    }
}

/// The test's handle on the editor's side of the connection.
pub struct Editor {
    pub cx: ConnectionTo<Agent>,
    shared: Shared,
}

impl Editor {
    pub fn answer_permissions(&self, answer: Answer) {
        *self.shared.answer.lock().unwrap() = answer;
    }

    /// Whether the permission requests left unanswered ([`Answer::Never`]) were withdrawn by
    /// acplb (`$/cancel_request`), so the editor can close its dialog.
    pub fn held_asks_withdrawn(&self) -> Vec<bool> {
        self.shared
            .held
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.cancellation().is_cancelled())
            .collect()
    }

    /// Every `session/update`, in order.
    pub fn updates(&self) -> Vec<SessionNotification> {
        self.shared.updates.lock().unwrap().clone()
    }

    pub async fn initialize(&self) -> InitializeResponse {
        self.initialize_with(agent_client_protocol::v1::schema::ClientCapabilities::new())
            .await
    }

    /// `initialize` of a client that declared `capabilities`.
    pub async fn initialize_with(
        &self,
        capabilities: agent_client_protocol::v1::schema::ClientCapabilities,
    ) -> InitializeResponse {
        let request = InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities);
        let sent = self.cx.send_request(request);
        within("initialize", sent.block_task())
            .await
            .expect("initialize is answered")
    }

    /// `session/new` in this crate's directory, answered or refused.
    pub fn new_session(&self) -> JoinHandle<Result<NewSessionResponse, Error>> {
        let sent = self
            .cx
            .send_request(NewSessionRequest::new(Path::new(env!("CARGO_MANIFEST_DIR"))));
        tokio::task::spawn_local(sent.block_task())
    }

    /// `initialize` and one session.
    pub async fn start(&self) -> SessionId {
        self.initialize().await;
        self.session().await
    }

    /// One more session, which must open.
    pub async fn session(&self) -> SessionId {
        let opened = within("session/new", self.new_session()).await.unwrap();
        opened.expect("session/new is answered").session_id
    }

    /// Sends a text prompt now; the handle resolves with its answer, which the editor also
    /// writes down as `client answered <text>: <stop reason or error message>`.
    pub fn prompt(&self, session: &SessionId, text: &str) -> JoinHandle<Result<PromptResponse, Error>> {
        let sent = self
            .cx
            .send_request(PromptRequest::new(session.clone(), vec![text.into()]))
            .block_task();
        let timeline = self.shared.timeline.clone();
        let text = text.to_owned();
        tokio::task::spawn_local(async move {
            let answer = sent.await;
            let shown = match &answer {
                Ok(r) => stop_name(r.stop_reason),
                Err(e) => format!("error: {}", e.message),
            };
            timeline.push(format!("client answered {text}: {shown}"));
            answer
        })
    }

    pub fn cancel(&self, session: &SessionId) {
        self.shared.timeline.push("client cancel");
        self.cx
            .send_notification(CancelNotification::new(session.clone()))
            .expect("the connection is open");
    }

    /// `session/close`, answered within the test's limit.
    pub async fn close(&self, session: &SessionId) -> Result<(), Error> {
        let req = agent_client_protocol::v1::schema::CloseSessionRequest::new(session.clone());
        within("session/close", self.cx.send_request(req).block_task())
            .await
            .map(|_| ())
    }

    pub async fn set_config(
        &self,
        session: &SessionId,
        id: &str,
        value: &str,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let req = SetSessionConfigOptionRequest::new(
            session.clone(),
            id.to_owned(),
            SessionConfigOptionValue::value_id(value.to_owned()),
        );
        within(
            "session/set_config_option",
            self.cx.send_request(req).block_task(),
        )
        .await
    }

    /// A round trip through the session's actor, which handles its messages in order: once
    /// this is answered, every message sent to the session before it has been handled.
    pub async fn barrier(&self, session: &SessionId) {
        self.set_config(session, "network_access", "false")
            .await
            .expect("the barrier's config change is accepted");
    }
}

/// Server options for tests: no turn time limit, a shutdown grace of a second.
pub fn options() -> ServerOptions {
    ServerOptions {
        agent_name: "acplb-test".into(),
        agent_version: "0.0.0".into(),
        shutdown_grace: LIMIT,
        output_flow: acplb_core::transport::OutputFlow::default(),
        turn_timeout: None,
        durability: None,
    }
}

/// Options with a turn time limit.
pub fn options_with_turn_limit(limit: Duration) -> ServerOptions {
    ServerOptions {
        turn_timeout: Some(limit),
        ..options()
    }
}

/// The two ends of an in-process connection on which the editor's hang-up is an end of input
/// for acplb (as a closed stdin), while what acplb still writes is taken and dropped (as by a
/// pipe nobody reads any more) rather than refused.
fn hang_up_is_eof() -> (Channel, Channel) {
    use futures::StreamExt as _;
    let (agent_end, editor_side) = Channel::duplex();
    let (mut from_agent, to_agent) = editor_side.into_parts();
    let (to_editor, editor_rx) = futures::channel::mpsc::unbounded();
    tokio::task::spawn_local(async move {
        while let Some(frame) = from_agent.next().await {
            if to_editor.unbounded_send(frame).is_err() {
                // The editor has hung up: the frame is dropped unread.
            }
        }
    });
    (agent_end, Channel::new(editor_rx, to_agent))
}

/// Serves `provider` to an in-memory editor running `body`; when `body` returns, the editor
/// hangs up (`client hung up` on the timeline) and the server must stop within [`LIMIT`].
pub async fn serve<R>(
    provider: &Scripted,
    timeline: &Timeline,
    options: ServerOptions,
    body: impl AsyncFnOnce(Editor) -> R,
) -> R {
    serve_with(provider, Arc::new(NoPlugins), timeline, options, body).await
}

/// [`serve`], with the sessions' plugins from `pipelines`.
pub async fn serve_with<R>(
    provider: &Scripted,
    pipelines: Arc<dyn PipelineSource>,
    timeline: &Timeline,
    options: ServerOptions,
    body: impl AsyncFnOnce(Editor) -> R,
) -> R {
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let (agent_end, editor_end) = hang_up_is_eof();
            let server = Server::new(Rc::new(provider.clone()), pipelines, options);
            let serving = tokio::task::spawn_local(server.serve(agent_end, std::future::pending()));
            let shared = Shared {
                timeline: timeline.clone(),
                answer: Arc::new(Mutex::new(Answer::Pick("allow"))),
                held: Arc::default(),
                updates: Arc::default(),
            };
            let (s1, s2) = (shared.clone(), shared.clone());
            let out = Client
                .v1()
                .name("test-editor")
                .on_receive_notification(
                    async move |n: SessionNotification, _cx| {
                        s1.on_update(n);
                        Ok(())
                    },
                    on_receive_notification!(),
                )
                .on_receive_request(
                    async move |req: RequestPermissionRequest,
                                responder: Responder<RequestPermissionResponse>,
                                _cx| { s2.on_permission(&req, responder) },
                    on_receive_request!(),
                )
                .connect_with(editor_end, async move |cx| Ok(body(Editor { cx, shared }).await))
                .await
                .expect("the editor's connection ends cleanly");
            timeline.push("client hung up");
            let stopped = within("stopping the server after the editor hung up", serving).await;
            stopped
                .expect("the server task does not panic")
                .expect("serve returns Ok when the editor hangs up");
            out
        })
        .await
}
