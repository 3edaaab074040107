//! The last ACP handler's request type: any request no typed handler serves (ADR 0046). The
//! methods that have a typed handler never match it, so a malformed request for one of them
//! gets the SDK's own answer.

use agent_client_protocol::UntypedMessage;
use serde_json::Value;

/// A request no typed handler serves: the last handler's (`handlers.rs`). The methods that do
/// have a typed handler never match it, so a malformed request for one of them gets the SDK's
/// own answer, as it did before this handler existed.
#[derive(Debug, Clone)]
pub(super) struct Unclaimed(pub(super) UntypedMessage);

/// The methods `handlers.rs` serves with typed handlers.
const TYPED: [&str; 25] = [
    "initialize",
    "authenticate",
    "logout",
    "auth/status",
    "session/new",
    "session/load",
    "session/resume",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_config_option",
    "session/list",
    "session/close",
    "session/delete",
    "session/fork",
    "session/set_title",
    "session/archive",
    "session/unarchive",
    "session/status",
    "providers/list",
    "providers/set",
    "providers/disable",
    "_session/batch_get",
    "_session/goal",
    "_codex/session/goal_control",
];

impl agent_client_protocol::JsonRpcMessage for Unclaimed {
    fn matches_method(method: &str) -> bool {
        !TYPED.contains(&method)
    }

    fn method(&self) -> &str {
        self.0.method()
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, agent_client_protocol::Error> {
        Ok(self.0.clone())
    }

    fn parse_message(method: &str, params: &Value) -> Result<Self, agent_client_protocol::Error> {
        UntypedMessage::new(method, params).map(Unclaimed)
    }
}

impl agent_client_protocol::JsonRpcRequest for Unclaimed {
    type Response = Value;
}
