//! What children shown as sessions ask the editor between their parent's turns (ADR 0059): a
//! child left working (`parked.rs`) that asks to run a command is asked in its own session, as
//! in a turn, through the session actor (no turn runs to carry the question). The open
//! questions stay with the view of the children, so the next turn that takes the view up waits
//! on them too, and a cancel of the child withdraws them; each answer goes back to Codex, and
//! the child shows `running` again once nothing it asked is open. A turn whose children go on
//! after it asks what they ask the same way, so a question open at its end stays open.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use acplb_core::provider::{BackgroundAsk, PermissionAnswer, PermissionAsk};
use agent_client_protocol::v1::schema::SessionUpdate;
use futures::future::LocalBoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::Subagents;
use crate::appserver::approval::Ask;

/// The most questions between turns the children of one session may have open; past it Codex
/// is told no (a flood the editor leaves unanswered cannot fill acplb's memory).
const OPEN_LIMIT: usize = 64;

/// A question of a child's put to the editor between turns, its answer to come.
pub(crate) struct OpenAsk {
    /// Codex's request id.
    pub(crate) id: Value,
    /// The child's thread.
    pub(crate) thread: String,
    /// How each answer goes back to Codex.
    pub(crate) ask: Ask,
    answer: LocalBoxFuture<'static, PermissionAnswer>,
}

impl std::fmt::Debug for OpenAsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAsk")
            .field("id", &self.id)
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// Why a child's request between turns is not put to the editor (Codex is told no).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotAsked {
    /// Not a child these children show as a session, or not an approval.
    NotOurs,
    /// Too many questions are open already.
    TooMany,
    /// The session is gone (nothing takes questions).
    NoEditor,
}

impl Subagents {
    /// Puts the request `id` (`method`, `params`) of a child shown as a session to the editor
    /// through `editor`, the child shown waiting for it (to `out`); why not, when it is not.
    pub(crate) fn ask_between(
        &mut self,
        id: &Value,
        method: &str,
        params: &Value,
        editor: &UnboundedSender<BackgroundAsk>,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<(), NotAsked> {
        self.ask_beside(id, method, params, editor, None, out)
    }

    /// [`Subagents::ask_between`] with the request's `_meta` (`meta`), from anywhere: a turn
    /// asks so too when its children go on being shown after it (`keeps_questions`), so that
    /// what they ask outlives it.
    pub(crate) fn ask_beside(
        &mut self,
        id: &Value,
        method: &str,
        params: &Value,
        editor: &UnboundedSender<BackgroundAsk>,
        meta: Option<agent_client_protocol::v1::schema::Meta>,
        out: &mut Vec<SessionUpdate>,
    ) -> Result<(), NotAsked> {
        if self.open_between.len() >= OPEN_LIMIT {
            return Err(NotAsked::TooMany);
        }
        let thread = params
            .get("threadId")
            .and_then(Value::as_str)
            .ok_or(NotAsked::NotOurs)?
            .to_owned();
        let session = self.session_of(params).ok_or(NotAsked::NotOurs)?;
        let ask = self.ask(method, params).ok_or(NotAsked::NotOurs)?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let question = PermissionAsk {
            tool_call: ask.tool_call.clone(),
            options: ask.options.clone(),
            meta,
            session: Some(session),
        };
        editor
            .send(BackgroundAsk {
                ask: question,
                answer: tx,
            })
            .map_err(|_| NotAsked::NoEditor)?;
        self.editor_asks(&thread, true, out);
        self.open_between.push(OpenAsk {
            id: id.clone(),
            thread,
            ask,
            answer: Box::pin(async move {
                rx.await
                    .unwrap_or_else(|_| PermissionAnswer::Unanswered("the session closed".into()))
            }),
        });
        Ok(())
    }

    /// The next question between turns the editor answered, with the answer; the child shows
    /// `running` again (to `out`) once nothing it asked is open. Pending while none is open
    /// (cancel-safe: an answer not taken stays with its question).
    pub(crate) fn answered<'a>(
        &'a mut self,
        out: &'a mut Vec<SessionUpdate>,
    ) -> impl Future<Output = (OpenAsk, PermissionAnswer)> + 'a {
        futures::future::poll_fn(move |cx| self.poll_answered(cx, out))
    }

    /// [`Subagents::answered`], polled once.
    pub(crate) fn poll_answered(
        &mut self,
        cx: &mut Context<'_>,
        out: &mut Vec<SessionUpdate>,
    ) -> Poll<(OpenAsk, PermissionAnswer)> {
        let ready = self.open_between.iter_mut().enumerate().find_map(|(at, open)| {
            match Pin::new(&mut open.answer).poll(cx) {
                Poll::Ready(answer) => Some((at, answer)),
                Poll::Pending => None,
            }
        });
        let Some((at, answer)) = ready else {
            return Poll::Pending;
        };
        let open = self.open_between.remove(at);
        self.editor_asks(&open.thread, false, out);
        Poll::Ready((open, answer))
    }

    /// Withdraws what the child on `thread` asked between turns (its work is cancelled, or it
    /// ended): each is returned to be answered "cancel".
    pub(crate) fn withdraw_asks(&mut self, thread: &str, out: &mut Vec<SessionUpdate>) -> Vec<OpenAsk> {
        let (theirs, rest) = std::mem::take(&mut self.open_between)
            .into_iter()
            .partition(|open| open.thread == thread);
        self.open_between = rest;
        for _ in &theirs {
            self.editor_asks(thread, false, out);
        }
        theirs
    }

    /// Codex settled its request `id` itself: the question is open no more (nothing is said to
    /// Codex; a late answer from the editor goes nowhere), and its child shows `running` again
    /// once nothing it asked is open.
    pub(crate) fn resolved(&mut self, id: &Value, out: &mut Vec<SessionUpdate>) {
        if let Some(at) = self.open_between.iter().position(|o| o.id == *id) {
            let open = self.open_between.remove(at);
            self.editor_asks(&open.thread, false, out);
        }
    }

    /// Withdraws every question open between turns (the view is let go): each is returned to
    /// be answered "cancel".
    pub(crate) fn withdraw_all(&mut self) -> Vec<OpenAsk> {
        std::mem::take(&mut self.open_between)
    }

    /// Whether what the children ask outlives the turn (they go on being shown after it), so a
    /// turn asks it as between turns.
    pub(crate) fn keeps_questions(&self, params: &Value) -> bool {
        self.follows_between_turns() && self.session_of(params).is_some()
    }

    /// How many questions the child on `thread` has open between turns.
    pub(super) fn open_between(&self, thread: &str) -> usize {
        self.open_between.iter().filter(|o| o.thread == thread).count()
    }
}
