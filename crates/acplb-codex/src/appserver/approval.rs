//! PLACEHOLDER (replaced by the real mapping): approval requests → permission prompts.

use agent_client_protocol::v1::schema::{PermissionOption, SessionUpdate, ToolCallUpdate};
use serde_json::{Value, json};

use super::decode::AppDecoder;

/// An ask.
#[derive(Debug)]
pub struct Ask {
    /// Tool call.
    pub tool_call: ToolCallUpdate,
    /// Options.
    pub options: Vec<PermissionOption>,
}

impl Ask {
    /// From a request.
    pub fn from_request(_method: &str, _params: &Value, _decoder: &AppDecoder) -> Option<Ask> {
        None
    }
    /// Answer.
    pub fn answer(&self, _option_id: &str) -> Value {
        json!({"decision": "decline"})
    }
    /// Rejected.
    pub fn rejected(&self) -> Value {
        json!({"decision": "decline"})
    }
    /// Cancelled.
    pub fn cancelled(&self) -> Value {
        json!({"decision": "cancel"})
    }
}

/// User input.
pub fn answer_user_input(_params: &Value, _out: &mut Vec<SessionUpdate>) -> Value {
    json!({"answers": {}})
}
