//! The async questions of one running turn ([`async_questions`]): each put to the editor as a
//! form the turn does not wait on; their answers, while the turn runs, are steered into it by
//! the turn. When the turn ends the open forms are withdrawn (`$/cancel_request`), and an
//! answer that still comes is not lost silently: the user is told it was not delivered.

use std::time::Duration;

use acplb_core::provider::{ElicitAnswer, SessionSink, tell_user};
use futures::StreamExt;
use futures::future::LocalBoxFuture;
use futures::stream::FuturesUnordered;
use serde_json::Value;

use super::TurnRun;
use crate::appserver::async_questions::{self, Asked};
use crate::appserver::protocol::methods;

/// How long, after the turn ended, a withdrawn form's answer is still awaited (to tell the user
/// it was not delivered); past it the form is forgotten.
const LATE_ANSWER_WAIT: Duration = Duration::from_secs(600);

/// Async forms one turn puts to the editor; past them a flood of questions is text only.
const MAX_FORMS: usize = 64;

/// What the user is told of an answer that came after its turn ended.
pub(super) const NOT_DELIVERED: &str = "Answer not sent: Codex finished before your answer arrived. \
Send it as a new message if it still matters.";

type Answer = LocalBoxFuture<'static, (Asked, ElicitAnswer)>;

/// The open async questions of one turn.
#[derive(Default)]
pub(super) struct OpenQuestions {
    answers: FuturesUnordered<Answer>,
    withdraw: Vec<Box<dyn Fn()>>,
    later: Option<Box<dyn SessionSink>>,
}

impl OpenQuestions {
    /// Puts the questions to the editor as a form, when it shows forms and the turn has not
    /// asked [`MAX_FORMS`] already (else the message's own text, already shown, is all the
    /// user sees).
    pub(super) fn ask(&mut self, asked: Asked, sink: &dyn SessionSink, air: bool) {
        if self.withdraw.len() >= MAX_FORMS {
            tracing::warn!("too many async questions in one turn; the rest are shown as text only");
            return;
        }
        let Some(form) = async_questions::form(&asked, air).and_then(|ask| sink.elicit_beside(ask)) else {
            tracing::debug!("async questions shown as text only: the client shows no forms");
            return;
        };
        let answer = form.answer;
        self.answers.push(Box::pin(async move { (asked, answer.await) }));
        self.withdraw.push(form.withdraw);
        self.later.get_or_insert(form.later);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The next answer (cancel-safe); pending forever when no form is open.
    pub(super) async fn next(&mut self) -> (Asked, ElicitAnswer) {
        match self.answers.next().await {
            Some(answered) => answered,
            None => std::future::pending().await,
        }
    }

    /// Asks the editor to close every open form (repeating it is harmless).
    pub(super) fn withdraw(&self) {
        for withdraw in &self.withdraw {
            withdraw();
        }
    }

    /// The turn ended: the open forms are withdrawn, and an answer that comes anyway (within
    /// [`LATE_ANSWER_WAIT`]) is met with the notice that it was not delivered.
    pub(super) fn close(self, shows_notices: bool) {
        if self.answers.is_empty() {
            return;
        }
        self.withdraw();
        let Self {
            mut answers, later, ..
        } = self;
        let Some(later) = later else {
            return;
        };
        tokio::task::spawn_local(async move {
            let late = async {
                while let Some((asked, answer)) = answers.next().await {
                    if async_questions::reply(&asked, &answer).is_some() {
                        tracing::info!("an async answer came after its turn ended; the user is told");
                        tell_user(&*later, shows_notices, NOT_DELIVERED);
                    }
                }
            };
            if tokio::time::timeout(LATE_ANSWER_WAIT, late).await.is_err() {
                tracing::debug!("withdrawn async questions left unanswered; forgotten");
            }
        });
    }
}

impl TurnRun<'_> {
    /// The questions of an async message of this turn (not a subagent's), if `method` brings one.
    pub(super) fn asked_beside(&self, method: &str, params: &Value) -> Option<Asked> {
        let of = |key: &str| params.get(key).and_then(Value::as_str);
        let other_turn =
            matches!((self.turn_id.as_deref(), of("turnId")), (Some(ours), Some(theirs)) if ours != theirs);
        if method != methods::ITEM_COMPLETED || of("threadId") != Some(self.thread_id) || other_turn {
            return None;
        }
        async_questions::asked(params)
    }

    /// An answer to an async question, given while the turn runs: steered into the turn as
    /// Codex's tagged reply; if Codex refuses it (the turn just ended), the user is told.
    pub(super) async fn answer_beside(
        &mut self,
        asked: &Asked,
        answer: &ElicitAnswer,
        sink: &dyn SessionSink,
    ) {
        let Some(reply) = async_questions::reply(asked, answer) else {
            tracing::info!("an async question was closed without an answer; the turn goes on");
            return;
        };
        if self.steer(&reply).await {
            tracing::info!(item = %asked.item_id, "steered the answer to an async question into the turn");
        } else {
            tell_user(sink, self.notices, NOT_DELIVERED);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use acplb_core::provider::{BesideForm, CollectingSink, ElicitAsk};
    use agent_client_protocol::v1::schema::SessionUpdate;

    use super::*;

    /// A sink whose forms are never answered; it counts the forms and the withdrawals.
    #[derive(Default)]
    struct Holding {
        asked: Cell<usize>,
        withdrawn: Rc<Cell<usize>>,
    }

    impl SessionSink for Holding {
        fn update(&self, _update: SessionUpdate) {}

        fn elicit_beside(&self, _ask: ElicitAsk) -> Option<BesideForm> {
            self.asked.set(self.asked.get() + 1);
            let withdrawn = Rc::clone(&self.withdrawn);
            Some(BesideForm {
                answer: Box::pin(std::future::pending()),
                withdraw: Box::new(move || withdrawn.set(withdrawn.get() + 1)),
                later: Box::new(CollectingSink::default()),
            })
        }
    }

    fn asked() -> Asked {
        Asked {
            item_id: "m".into(),
            questions: vec![("Go?".into(), vec![])],
        }
    }

    #[test]
    fn a_flood_of_questions_asks_a_bounded_number_of_forms_and_all_are_withdrawn() {
        let sink = Holding::default();
        let mut open = OpenQuestions::default();
        for _ in 0..MAX_FORMS + 10 {
            open.ask(asked(), &sink, false);
        }
        assert_eq!(sink.asked.get(), MAX_FORMS);
        open.withdraw();
        assert_eq!(sink.withdrawn.get(), MAX_FORMS);
    }

    #[test]
    fn a_client_without_forms_is_asked_nothing() {
        let mut open = OpenQuestions::default();
        open.ask(asked(), &CollectingSink::default(), false);
        assert!(open.is_empty());
        // Nothing open: closing spawns nothing (no runtime needed).
        open.close(true);
    }
}
