//! Questions put to the editor as forms that the turn waits on: Codex's own
//! (`item/tool/requestUserInput`) and MCP servers' (`mcpServer/elicitation/request`), who asked
//! and the result each gets back.

use acplb_core::provider::{ElicitAnswer, ElicitAsk, SessionSink};
use serde_json::Value;

use crate::appserver::protocol::methods;
use crate::appserver::{mcp_form, user_input};

/// Who asked a question put to the editor as a form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Asker {
    /// Codex (`item/tool/requestUserInput`): a dismissed form stops the turn.
    Codex,
    /// An MCP server (`mcpServer/elicitation/request`): it is told the form was dismissed.
    Mcp,
}

impl Asker {
    pub(super) fn result(self, params: &Value, answer: &ElicitAnswer) -> Value {
        match self {
            Asker::Codex => user_input::answers(params, answer),
            Asker::Mcp => mcp_form::answer(answer),
        }
    }
}

/// A question put to the editor as a form: the request's id, params and asker, and the answer.
pub(super) type PendingQuestion<'s> =
    futures::future::LocalBoxFuture<'s, (Value, Value, Asker, ElicitAnswer)>;

/// The form a question from Codex or an MCP server becomes, when the editor shows forms and
/// the question can be one (with AIR's marks for an AIR client, `air`).
pub(super) fn form(
    method: &str,
    params: &Value,
    sink: &dyn SessionSink,
    air: bool,
) -> Option<(Asker, ElicitAsk)> {
    if !sink.can_elicit() {
        return None;
    }
    match method {
        methods::TOOL_USER_INPUT => Some((Asker::Codex, user_input::form(params, air)?)),
        methods::MCP_ELICITATION => Some((Asker::Mcp, mcp_form::form(params)?)),
        _ => None,
    }
}
