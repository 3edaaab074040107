//! A request Codex makes during a turn: a permission ask (a subagent's in its own name; one of a
//! subagent that goes on after the turn asked through the session actor, so that it outlives
//! the turn: ADR 0059) or a question put to the editor, its answer awaited beside the turn and
//! given to Codex when it comes; what the editor cannot be asked is answered at once.

use super::forms::{PendingQuestion, form};
use super::turn::{PendingAsk, TurnRun};
use super::{Ask, FuturesUnordered, PermissionAnswer, SessionSink, Value, answer_user_input};
use crate::appserver::mcp_form;
use crate::appserver::protocol::methods;
use acplb_core::provider::ElicitAnswer;

impl TurnRun<'_> {
    /// A request of Codex's: a permission ask or a question put to the editor (its answer
    /// awaited beside the turn), else answered at once.
    pub(super) fn on_request<'s>(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        sink: &'s dyn SessionSink,
        asks: &mut FuturesUnordered<PendingAsk<'s>>,
        questions: &mut FuturesUnordered<PendingQuestion<'s>>,
    ) {
        // A subagent's request: the thread it runs on.
        let child = (params.get("threadId").and_then(Value::as_str))
            .filter(|_| self.subagents.is_child(&params))
            .map(str::to_owned);
        // What a child that goes on after the turn asks outlives the turn (ADR 0059).
        if child.is_some() && self.subagents.keeps_questions(&params) {
            let meta = self.permission_meta(method, &params);
            match self
                .subagents
                .ask_beside(&id, method, &params, &self.editor, meta, &mut self.out)
            {
                Ok(()) => return,
                Err(crate::appserver::subagents::NotAsked::NotOurs) => {}
                Err(why) => {
                    tracing::debug!(%method, ?why, "a subagent's question not put to the editor; declined");
                    self.respond_error(&id, -32603, super::follower::refusal(why));
                    return;
                }
            }
        }
        let ask = match child {
            Some(_) => self.subagents.ask(method, &params),
            None => Ask::from_request(method, &params, &self.decoder),
        };
        if let Some(ask) = ask {
            let question = acplb_core::provider::PermissionAsk {
                tool_call: ask.tool_call.clone(),
                options: ask.options.clone(),
                meta: self.permission_meta(method, &params),
                session: self.subagents.session_of(&params),
            };
            self.waiting.push((id.clone(), ask.cancelled()));
            // A cancel of the child's work stops the wait: the ask ends as if cancelled.
            let (stop, stoppable) = futures::future::AbortHandle::new_pair();
            if let Some(thread) = child {
                self.subagents.editor_asks(&thread, true, &mut self.out);
                self.child_asks.push((id.clone(), thread, stop));
            }
            asks.push(Box::pin(async move {
                let asked = futures::future::Abortable::new(sink.request_permission(question), stoppable);
                let answer = asked.await.unwrap_or(PermissionAnswer::Cancelled);
                (id, ask, answer)
            }));
        } else if let Some((asker, form)) = form(method, &params, sink, self.decoder.options().air.is_some())
        {
            self.waiting
                .push((id.clone(), asker.result(&params, &ElicitAnswer::Cancelled)));
            questions.push(Box::pin(async move {
                let answer = sink.elicit(form).await;
                (id, params, asker, answer)
            }));
        } else if method == methods::TOOL_USER_INPUT {
            let result = answer_user_input(&params, &mut self.out);
            self.respond(&id, result);
        } else if method == methods::MCP_ELICITATION {
            // An MCP server asking the user for data the editor cannot show
            // (no forms, or not a form): a decline the server can handle.
            tracing::info!("an MCP server asked for input acplb cannot show; declined");
            self.respond(&id, mcp_form::declined());
        } else {
            tracing::warn!(%method, "codex app-server asked something acplb cannot answer; declined");
            self.respond_error(&id, -32601, "acplb cannot answer this request");
        }
    }

    /// The `_meta` of a permission request for `method`: AIR's `permission`, for an AIR client.
    fn permission_meta(
        &self,
        method: &str,
        params: &Value,
    ) -> Option<agent_client_protocol::v1::schema::Meta> {
        let air = self.decoder.options().air.is_some();
        air.then(|| crate::appserver::approval::air_permission(method, params))
            .flatten()
    }

    /// The editor answered the permission ask `id` (or it went unanswered): Codex hears the
    /// answer, and a subagent that asked it runs on.
    pub(super) fn permission_answered(
        &mut self,
        id: &Value,
        ask: &Ask,
        answer: &PermissionAnswer,
        sink: &dyn SessionSink,
    ) {
        let result = ask.result(answer);
        self.waiting.retain(|(waiting, _)| waiting != id);
        self.respond(id, result);
        if let Some(at) = self.child_asks.iter().position(|(asked, ..)| asked == id) {
            let (_, thread, _) = self.child_asks.swap_remove(at);
            self.subagents.editor_asks(&thread, false, &mut self.out);
            self.flush(sink);
        }
    }
}
