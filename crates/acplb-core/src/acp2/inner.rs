//! What the v1 runtime sends its client, as the v2 client gets it (ADR 0048): session updates
//! in v2's shapes, permission requests with v2's title and subject, questions as they are;
//! while a turn waits on an answer the session is `requires_action`.

use std::sync::Arc;

use agent_client_protocol::UntypedMessage;
use serde_json::{Map, Value, json};

use super::content;
use super::face::Face;
use super::updates;
use crate::error::wire;

/// The v1 runtime's notification `method`.
pub(super) fn notification(face: &Face, method: &str, mut params: Value) {
    if method != "session/update" {
        // Vendor notifications (`_session/list/changes`, `_auth/status_update`) and
        // `elicitation/complete` have the same shape on both versions.
        face.notify(method, params);
        return;
    }
    let session = super::face::named(&params);
    let update = params.get_mut("update").map_or(Value::Null, Value::take);
    let v2 = face.with_sessions(|s| updates::to_v2(update, &mut s.get(&session).ids));
    for update in v2 {
        let again = face.with_sessions(|s| s.sent(&session, &update));
        let child = child_state(&update);
        face.update(&session, update);
        // After the exit it reports, so the terminal's end comes before it leaves the list.
        face.state(&session, again);
        // A child's state, mirrored on its parent, is its own session's state too (v2 asks
        // for both, ADR 0061).
        if let Some((child, state)) = child {
            face.state(&child, Some(state));
        }
    }
}

/// The child session and the state a `subagent_update` reports of it, if it reports one.
fn child_state(update: &Value) -> Option<(String, Value)> {
    if update["sessionUpdate"] != "subagent_update" {
        return None;
    }
    let child = update["sessionId"].as_str()?;
    let state = update.get("state").filter(|s| s.is_object())?;
    Some((child.to_owned(), state.clone()))
}

/// The v1 runtime's request `method`, answered with the client's answer.
pub(super) fn request(
    face: &Arc<Face>,
    method: &str,
    params: Value,
    responder: agent_client_protocol::v1::Responder<Value>,
) {
    let Some(outer) = face.outer() else {
        wire::reply(responder.respond_with_error(wire::method_not_found(method)));
        return;
    };
    let session = params.get("sessionId").and_then(Value::as_str).map(str::to_owned);
    let (method, params) = match method {
        "session/request_permission" => ("session/request_permission", permission(params)),
        other => (other, params),
    };
    let asks = matches!(method, "session/request_permission" | "elicitation/create");
    if let (true, Some(id)) = (asks, &session) {
        face.state(id, face.with_sessions(|s| s.asked(id)));
    }
    let message = match UntypedMessage::new(method, params) {
        Ok(m) => m,
        Err(e) => return wire::reply(responder.respond_with_error(e)),
    };
    let face = face.clone();
    let sent = outer
        .send_request(message)
        .on_receiving_result(async move |answer| {
            if let (true, Some(id)) = (asks, &session) {
                face.state(id, face.with_sessions(|s| s.answered(id)));
            }
            wire::reply(responder.respond_with_result(answer));
            Ok(())
        });
    wire::reply(sent);
}

/// A v1 permission request as v2's: a title of its own, the tool call as its subject.
fn permission(params: Value) -> Value {
    let Value::Object(mut params) = params else {
        return params;
    };
    let mut call = match params.remove("toolCall") {
        Some(Value::Object(call)) => call,
        _ => Map::new(),
    };
    let title = call
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .unwrap_or("Allow this?")
        .to_owned();
    if let Some(Value::Array(items)) = call.get_mut("content") {
        items.iter_mut().for_each(content::to_v2);
    }
    params.insert("title".into(), json!(title));
    params.insert("subject".into(), json!({"type": "tool_call", "toolCall": call}));
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v2::schema::RequestPermissionRequest;

    use super::*;

    #[test]
    fn a_childs_update_from_v1_is_a_v2_subagent_update_and_its_state_the_childs() {
        use agent_client_protocol::v1::schema as v1;
        let states = [
            v1::StateUpdate::Running(v1::RunningStateUpdate::new()),
            v1::StateUpdate::Idle(v1::IdleStateUpdate::new().stop_reason(v1::IdleStopReason::Cancelled)),
            v1::StateUpdate::RequiresAction(v1::RequiresActionStateUpdate::new()),
        ];
        for state in states {
            let caps = v1::SubagentSessionCapabilities::new().cancel(v1::SessionCancelCapabilities::new());
            let update = v1::SessionUpdate::SubagentUpdate(
                v1::SubagentUpdate::new("p:subagent:c")
                    .title("lister".to_owned())
                    .state(state)
                    .capabilities(caps),
            );
            let sent = updates::to_v2(
                serde_json::to_value(&update).unwrap(),
                &mut updates::Ids::default(),
            );
            assert_eq!(sent.len(), 1);
            let v2: agent_client_protocol::v2::schema::SessionUpdate =
                serde_json::from_value(sent[0].clone()).unwrap();
            let again = serde_json::to_value(&v2).unwrap();
            assert_eq!(again, sent[0], "v2 reads it as it is");
            let (child, mirrored) = child_state(&sent[0]).expect("a state");
            assert_eq!(child, "p:subagent:c");
            assert_eq!(mirrored, sent[0]["state"]);
        }
        let announced =
            json!({"sessionUpdate": "subagent_update", "sessionId": "p:subagent:c", "title": "x"});
        assert_eq!(child_state(&announced), None, "no state: nothing mirrored");
    }

    #[test]
    fn a_permission_request_gets_a_title_and_a_subject() {
        let v1 = json!({"sessionId": "s", "toolCall": {"toolCallId": "c", "title": "Run `ls`?", "kind": "execute"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]});
        let v2 = permission(v1);
        let typed: RequestPermissionRequest = serde_json::from_value(v2.clone()).unwrap();
        assert_eq!(typed.title, "Run `ls`?");
        assert_eq!(v2["subject"]["toolCall"]["toolCallId"], "c");
    }
}
