//! Where a running turn's updates and questions go: the [`SessionSink`] a provider writes to
//! (forwarded to the editor through the plugin pipeline), the permission and form questions it
//! may put to the user, a collecting sink for tests and `playback decode`, and [`tell_user`].

use agent_client_protocol::v1::schema::{
    ElicitationSchema, PermissionOption, SessionUpdate, ToolCallId, ToolCallUpdate,
};
use futures::future::LocalBoxFuture;

/// A question for the editor: may the provider do what `tool_call` shows?
#[derive(Debug, Clone)]
pub struct PermissionAsk {
    /// The tool call the question is about (the command, or the diff), with the id of the
    /// live tool call so the editor can tie them together.
    pub tool_call: ToolCallUpdate,
    /// The choices offered, in order.
    pub options: Vec<PermissionOption>,
    /// The request's `_meta` (`JetBrains` AIR's `permission` for an AIR client, ADR 0049).
    pub meta: Option<agent_client_protocol::v1::schema::Meta>,
    /// The session that asks, when it is not the sink's own: a subagent session of it (ADR
    /// 0055).
    pub session: Option<String>,
}

/// A permission question the provider puts to the editor between turns (a subagent left working
/// asks something), through the session actor, which owns the way to the editor: the answer goes
/// back on `answer`. A provider that stops waiting drops the receiver.
#[derive(Debug)]
pub struct BackgroundAsk {
    /// The question.
    pub ask: PermissionAsk,
    /// Where the editor's answer goes.
    pub answer: tokio::sync::oneshot::Sender<PermissionAnswer>,
}

/// The editor's answer to a [`PermissionAsk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionAnswer {
    /// The user picked this option id.
    Selected(String),
    /// The prompt was cancelled (by the user or by `session/cancel`).
    Cancelled,
    /// The client answered with an error, went away, or cannot be asked: treated as a
    /// rejection. The text says why, for the log.
    Unanswered(String),
}

/// A form for the user (ACP `elicitation/create` in form mode): the provider's question.
#[derive(Debug, Clone)]
pub struct ElicitAsk {
    /// What is asked, shown above the form.
    pub message: String,
    /// The form's fields.
    pub schema: ElicitationSchema,
    /// The tool call the question belongs to, if any.
    pub tool_call_id: Option<ToolCallId>,
}

/// The editor's answer to an [`ElicitAsk`].
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// The user filled the form in: each field's value as JSON (absent fields left out).
    Accepted(serde_json::Map<String, serde_json::Value>),
    /// The user declined to answer.
    Declined,
    /// The user (or `session/cancel`) dismissed the form.
    Cancelled,
    /// The client answered with an error, went away, or cannot show forms; the text says why.
    Unanswered(String),
}

/// A form put to the user that nothing waits on ([`SessionSink::elicit_beside`]): the turn
/// runs on while it is open, and the answer may come after the turn ended.
pub struct BesideForm {
    /// The answer. It owns what it needs, so it can be awaited after the turn ended.
    pub answer: LocalBoxFuture<'static, ElicitAnswer>,
    /// Asks the editor to close the form (`$/cancel_request`) without dropping an answer
    /// already on its way: [`BesideForm::answer`] still resolves, with whatever the editor
    /// sends back.
    pub withdraw: Box<dyn Fn()>,
    /// Where to tell the user about the form after the turn ended.
    pub later: Box<dyn SessionSink>,
}

impl std::fmt::Debug for BesideForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BesideForm").finish_non_exhaustive()
    }
}

/// Where a provider sends the updates of a running turn.
///
/// Implementations forward to the ACP client (through the plugin pipeline); tests collect them.
pub trait SessionSink {
    /// Sends one `session/update` for the session this sink belongs to.
    fn update(&self, update: SessionUpdate);

    /// Resolves when the client can take more updates. Providers await it before they read
    /// more of their child's output, so a client that stops reading pauses the child instead
    /// of filling acplb's memory.
    fn ready(&self) -> LocalBoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }

    /// The provider learned the id of the session's conversation (Codex thread id), or it
    /// changed: the journal records it so a later process can continue the conversation.
    fn thread_started(&self, id: &str) {
        let _ = id;
    }

    /// Asks the editor for permission (`session/request_permission`) and waits for the answer.
    /// The provider races it against the turn's cancellation itself. Sinks that have no editor
    /// to ask answer [`PermissionAnswer::Unanswered`].
    fn request_permission(&self, ask: PermissionAsk) -> LocalBoxFuture<'_, PermissionAnswer> {
        drop(ask);
        Box::pin(std::future::ready(PermissionAnswer::Unanswered(
            "no editor to ask".into(),
        )))
    }

    /// Whether the editor shows forms ([`SessionSink::elicit`]); when it does not, a provider
    /// answers its agent's questions itself and shows the user what was asked.
    fn can_elicit(&self) -> bool {
        false
    }

    /// Puts a form to the user (`elicitation/create`, form mode) and waits for the answer.
    /// The provider races it against the turn's cancellation itself.
    fn elicit(&self, ask: ElicitAsk) -> LocalBoxFuture<'_, ElicitAnswer> {
        drop(ask);
        Box::pin(std::future::ready(ElicitAnswer::Unanswered(
            "the editor shows no forms".into(),
        )))
    }

    /// Puts a form to the user that the turn does not wait on (`elicitation/create`, form
    /// mode); `None` when the editor shows no forms. The provider withdraws it when it no
    /// longer needs the answer.
    fn elicit_beside(&self, ask: ElicitAsk) -> Option<BesideForm> {
        drop(ask);
        None
    }
}

/// A sink that keeps every update, for tests and for `playback decode`; permission asks are
/// answered with the option ids given to [`CollectingSink::answering`], in turn (then
/// unanswered).
#[derive(Debug, Default)]
pub struct CollectingSink {
    updates: std::cell::RefCell<Vec<SessionUpdate>>,
    answers: std::cell::RefCell<std::collections::VecDeque<String>>,
}

impl CollectingSink {
    /// A sink answering permission asks with these option ids, in order.
    pub fn answering<I: IntoIterator<Item = S>, S: Into<String>>(answers: I) -> Self {
        let sink = Self::default();
        sink.answers
            .borrow_mut()
            .extend(answers.into_iter().map(Into::into));
        sink
    }

    /// Takes the updates collected so far.
    pub fn take(&self) -> Vec<SessionUpdate> {
        std::mem::take(&mut self.updates.borrow_mut())
    }
}

impl SessionSink for CollectingSink {
    fn update(&self, update: SessionUpdate) {
        self.updates.borrow_mut().push(update);
    }

    fn request_permission(&self, _ask: PermissionAsk) -> LocalBoxFuture<'_, PermissionAnswer> {
        let answer = match self.answers.borrow_mut().pop_front() {
            Some(id) => PermissionAnswer::Selected(id),
            None => PermissionAnswer::Unanswered("no scripted answer left".into()),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Tells the user something about their session: a `notice` update when the client shows
/// them, else an agent message (which every editor shows).
pub fn tell_user(sink: &dyn SessionSink, shows_notices: bool, text: &str) {
    use agent_client_protocol::v1::schema::{ContentBlock, ContentChunk, Notice, NoticeSeverity};
    let update = if shows_notices {
        SessionUpdate::Notice(Notice::new(NoticeSeverity::Warning, text))
    } else {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(format!("{text}\n\n"))))
    };
    sink.update(update);
}
