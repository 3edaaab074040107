//! A form Codex asks the user to fill in during a tool call (one of its questions, an MCP
//! server's form) relayed to the MCP client as its own elicitation (form mode), and the user's
//! answer back. A client that cannot elicit, a form it cannot take and a failed ask are declined,
//! and the call's result says so.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationCapabilities, ElicitationFormCapabilities, ElicitationMode,
};
use rmcp::model::{ElicitRequestParams, ElicitResult};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

/// What the in-process client declares: forms. Each goes on to the MCP client, or is declined
/// when that cannot elicit (what a client without forms would get).
pub(crate) fn declared() -> ClientCapabilities {
    ClientCapabilities::new()
        .elicitation(ElicitationCapabilities::new().form(ElicitationFormCapabilities::new()))
}

/// Asks the MCP client and answers `responder`; `Some` note when the form was not answered.
pub(crate) async fn relay(
    peer: &Peer<RoleServer>,
    req: CreateElicitationRequest,
    responder: Responder<CreateElicitationResponse>,
) -> Option<String> {
    let message = req.message.as_str();
    let (answer, note) = if peer.supported_elicitation_modes().is_empty() {
        (
            decline(),
            Some(format!(
                "declined a form (\"{message}\"): this MCP client cannot be asked (no elicitation support)"
            )),
        )
    } else {
        match ask(peer, &req, message).await {
            Ok(answer) => (answer, None),
            Err(why) => (decline(), Some(format!("declined a form (\"{message}\"): {why}"))),
        }
    };
    if let Err(e) = responder.respond(answer) {
        tracing::warn!(error = %e.message, "cannot answer a form");
    }
    note
}

async fn ask(
    peer: &Peer<RoleServer>,
    req: &CreateElicitationRequest,
    message: &str,
) -> Result<CreateElicitationResponse, String> {
    let ElicitationMode::Form(form) = &req.mode else {
        return Err("it is not a form".to_owned());
    };
    let schema = serde_json::to_value(&form.requested_schema).map_err(|e| e.to_string())?;
    let params: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": schema,
    }))
    .map_err(|e| format!("its fields cannot be sent over MCP: {e}"))?;
    let result: ElicitResult = peer
        .create_elicitation(params)
        .await
        .map_err(|e| format!("asking the user failed: {e}"))?;
    answer(&result)
}

/// The MCP client's answer as ACP's.
fn answer(result: &ElicitResult) -> Result<CreateElicitationResponse, String> {
    let value = serde_json::to_value(result).map_err(|e| e.to_string())?;
    let action = value.get("action").and_then(Value::as_str).unwrap_or("decline");
    let acp = match action {
        "accept" => {
            json!({"action": "accept", "content": value.get("content").cloned().unwrap_or_else(|| json!({}))})
        }
        "cancel" => json!({"action": "cancel"}),
        _ => json!({"action": "decline"}),
    };
    serde_json::from_value(acp).map_err(|e| format!("the answer does not fit the form: {e}"))
}

fn decline() -> CreateElicitationResponse {
    CreateElicitationResponse::new(ElicitationAction::Decline)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_actions_become_acps() {
        let accept: ElicitResult =
            serde_json::from_value(json!({"action": "accept", "content": {"table": "b"}})).unwrap();
        let acp = serde_json::to_value(answer(&accept).unwrap()).unwrap();
        assert_eq!(acp["action"], "accept");
        assert_eq!(acp["content"], json!({"table": "b"}));
        for action in ["decline", "cancel"] {
            let r: ElicitResult = serde_json::from_value(json!({ "action": action })).unwrap();
            let acp = serde_json::to_value(answer(&r).unwrap()).unwrap();
            assert_eq!(acp["action"], action);
        }
    }
}
