//! Which v1 request serves each v2 request, and the shapes that differ (ADR 0048). Pure: the
//! face (`face.rs`) sends what these return.

use serde_json::{Map, Value, json};

use super::updates::{config_options, keep_meta};
use crate::capabilities::{AIR, JETBRAINS};

/// How the face serves one v2 request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// `initialize`: negotiated here, answered from v1's.
    Initialize,
    /// `session/prompt`: answered at once; the turn ends with a `state_update`.
    Prompt,
    /// `session/resume`: v1 `session/load` when history is replayed, else `session/resume`;
    /// a state snapshot before the answer.
    Resume,
    /// The v1 request `method`, params and result reshaped by `shape`.
    Forward { method: &'static str, shape: Shape },
    /// A v2 method acplb does not serve, refused with `-32602` and this reason.
    Refused(&'static str),
    /// No such method in acplb's v2 face.
    Unknown,
}

/// Which reshaping a forwarded request needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// The same params and result on both versions.
    Same,
    /// A session was set up (new, fork): v2's setup response.
    Setup,
    /// `session/set_config_option`: v2's typed value in, v2's options out.
    SetConfig,
}

/// The route of the v2 request `method`.
pub(super) fn route(method: &str) -> Route {
    let forward = |method, shape| Route::Forward { method, shape };
    match method {
        "initialize" => Route::Initialize,
        "session/prompt" => Route::Prompt,
        "session/resume" => Route::Resume,
        "session/new" => forward("session/new", Shape::Setup),
        "session/fork" => forward("session/fork", Shape::Setup),
        "session/set_config_option" => forward("session/set_config_option", Shape::SetConfig),
        "session/list" => forward("session/list", Shape::Same),
        "session/close" => forward("session/close", Shape::Same),
        "session/delete" => forward("session/delete", Shape::Same),
        "session/archive" => forward("session/archive", Shape::Same),
        "session/unarchive" => forward("session/unarchive", Shape::Same),
        "session/status" => forward("session/status", Shape::Same),
        "session/set_title" => forward("session/set_title", Shape::Same),
        "auth/login" => forward("authenticate", Shape::Same),
        "auth/logout" => forward("logout", Shape::Same),
        "auth/status" => forward("auth/status", Shape::Same),
        "providers/list" => forward("providers/list", Shape::Same),
        "providers/set" => forward("providers/set", Shape::Same),
        "providers/disable" => forward("providers/disable", Shape::Same),
        "tool_call/cancel" | "terminal/cancel" => Route::Refused(
            "acplb cannot stop one tool call or terminal on its own; session/cancel stops the turn, and /terminals stop <id> a background command",
        ),
        _ => Route::Unknown,
    }
}

/// The v1 params for a forwarded request's v2 `params`; `Err` is the reason they are refused.
pub(super) fn params(shape: Shape, params: Value) -> Result<Value, String> {
    match shape {
        Shape::Same => Ok(params),
        Shape::Setup => Ok(with_servers(params)),
        Shape::SetConfig => set_config(params),
    }
}

/// The v2 result for a forwarded request's v1 `result`.
pub(super) fn result(shape: Shape, result: Value) -> Value {
    match shape {
        Shape::Same => result,
        Shape::Setup => setup(result),
        Shape::SetConfig => options_only(result),
    }
}

/// Session setup params with `mcpServers`, which v2 may leave out and v1 needs.
fn with_servers(mut params: Value) -> Value {
    if let Some(params) = params.as_object_mut() {
        params.entry("mcpServers").or_insert_with(|| json!([]));
    }
    params
}

/// v2 `session/set_config_option` (`type`: `id` or `boolean`) as v1's.
fn set_config(params: Value) -> Result<Value, String> {
    let Value::Object(mut params) = params else {
        return Err("session/set_config_option takes an object".into());
    };
    let kind = params.remove("type");
    match (kind.as_ref().and_then(Value::as_str), params.get("value")) {
        (Some("id"), Some(Value::String(_))) => {}
        (Some("boolean"), Some(Value::Bool(_))) => {
            params.insert("type".into(), json!("boolean"));
        }
        _ => {
            return Err(
                "session/set_config_option needs `type` \"id\" with a string `value` or \"boolean\" with a boolean `value`"
                    .into(),
            );
        }
    }
    Ok(Value::Object(params))
}

/// A v1 session setup result (new, fork, load, resume) as v2's: the session id, its config
/// options in v2's shape, no modes (v2 has none: the mode is a config option).
pub(super) fn setup(result: Value) -> Value {
    let Value::Object(mut result) = result else {
        return result;
    };
    let mut out = Map::new();
    if let Some(id) = result.remove("sessionId") {
        out.insert("sessionId".into(), id);
    }
    let mut options = result.remove("configOptions").unwrap_or_else(|| json!([]));
    config_options(&mut options);
    out.insert("configOptions".into(), options);
    out.insert("availableCommands".into(), json!([]));
    keep_meta(&mut out, &mut result);
    Value::Object(out)
}

fn options_only(mut result: Value) -> Value {
    let mut options = result
        .get_mut("configOptions")
        .map_or_else(|| json!([]), Value::take);
    config_options(&mut options);
    json!({ "configOptions": options })
}

/// v2 `session/resume` as the v1 request that serves it: `session/load` (which replays the
/// history) for `replayFrom: {"type": "start"}`, else `session/resume`.
pub(super) fn resume(params: Value) -> Result<(&'static str, Value), String> {
    let Value::Object(mut params) = params else {
        return Err("session/resume takes an object".into());
    };
    match params.remove("replayFrom") {
        None | Some(Value::Null) => Ok(("session/resume", with_servers(Value::Object(params)))),
        Some(from) if from.get("type").and_then(Value::as_str) == Some("start") => {
            Ok(("session/load", with_servers(Value::Object(params))))
        }
        Some(from) => Err(format!(
            "acplb replays a session's history from its start only (`replayFrom: {{\"type\": \"start\"}}`), not from {from}"
        )),
    }
}

/// A v2 `initialize`'s params as the v1 `initialize` acplb's runtime serves: the client's
/// elicitation and terminal-auth support, its `_meta`, plus what the face turns into v2's own
/// updates (Zed's terminal metadata, compaction updates, notices, boolean options) or passes
/// as they are (`plan_update`, v2's only shape of a plan; `subagent_update`, v2's baseline).
pub(super) fn initialize(params: &Value) -> Value {
    let caps = &params["capabilities"];
    let mut meta = caps
        .get("_meta")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    meta.insert(crate::capabilities::TERMINAL_OUTPUT.into(), json!(true));
    // v2 has its own diffs, terminals and plans: the AIR tool call and plan extensions are
    // not offered there (as the TS peer does), so an AIR client gets v2's shapes. Nor are
    // typed failures, which the peer publishes on v2 through session metadata acplb does not
    // keep: a failed turn stays a v2 error. Async tasks stay: v2 has none of its own, and
    // they come as `_async_task_*` (`updates.rs`).
    not_on_v2(&mut meta);
    let mut client = Map::new();
    if let Some(elicitation) = caps.get("elicitation").filter(|e| e.is_object()) {
        client.insert("elicitation".into(), elicitation.clone());
    }
    let terminal_auth = caps["auth"].get("terminal").is_some_and(Value::is_object);
    client.insert("auth".into(), json!({ "terminal": terminal_auth }));
    client.insert(
        "session".into(),
        json!({"compaction": {}, "notices": {}, "configOptions": {"boolean": {}}}),
    );
    client.insert("plan".into(), json!({}));
    // Subagent sessions are baseline on v2 (no capability asks for them): each child is a
    // session of its own, as v1's `subagents` capability has it (ADR 0061).
    // In ACP's shape, even for an AIR client (v2 has no other).
    client.insert("subagents".into(), json!({}));
    meta.insert(crate::capabilities::ACP_SUBAGENTS.into(), json!(true));
    client.insert("_meta".into(), Value::Object(meta));
    let mut v1 = json!({
        "protocolVersion": 1,
        "clientCapabilities": client,
    });
    if let Some(info) = params.get("info").filter(|i| i.is_object()) {
        v1["clientInfo"] = info.clone();
    }
    if let Some(m) = params.get("_meta").filter(|m| m.is_object()) {
        v1["_meta"] = m.clone();
    }
    v1
}

/// The AIR capabilities acplb answers on v1 only (v2 has its own shapes, or acplb keeps no v2
/// session metadata to carry them, or, for subagent sessions, does not translate them to v2's).
const NOT_ON_V2: [&str; 5] = [
    "diffPatch",
    "rawInputRendering",
    "planContentDelta",
    "sessionFailure",
    crate::capabilities::AIR_NATIVE_SUBAGENT_SESSIONS,
];

/// Takes the AIR capabilities of [`NOT_ON_V2`] out of the declaration or list in `meta`.
fn not_on_v2(meta: &mut Map<String, Value>) {
    let air = meta.get_mut(JETBRAINS).and_then(|j| j.get_mut(AIR));
    if let Some(Value::Array(air)) = air.and_then(|a| a.get_mut("capabilities")) {
        air.retain(|c| !c.as_str().is_some_and(|c| NOT_ON_V2.contains(&c)));
    }
}

/// v1's `initialize` result as v2's: what the runtime offers, in v2's capability shapes.
pub(super) fn initialized(v1: &Value) -> Value {
    let agent = &v1["agentCapabilities"];
    let on = |v: &Value| v.as_bool() == Some(true) || v.is_object();
    let prompt = &agent["promptCapabilities"];
    let mut session = Map::new();
    let mut prompt_caps = Map::new();
    for (v1_key, v2_key) in [
        ("image", "image"),
        ("audio", "audio"),
        ("embeddedContext", "embeddedContext"),
    ] {
        if on(&prompt[v1_key]) {
            prompt_caps.insert(v2_key.into(), json!({}));
        }
    }
    session.insert("prompt".into(), Value::Object(prompt_caps));
    let mut mcp = Map::new();
    mcp.insert("stdio".into(), json!({}));
    if on(&agent["mcpCapabilities"]["http"]) {
        mcp.insert("http".into(), json!({}));
    }
    session.insert("mcp".into(), Value::Object(mcp));
    let sessions = &agent["sessionCapabilities"];
    for key in [
        "delete",
        "additionalDirectories",
        "systemPrompt",
        "fork",
        "archive",
        "status",
        "title",
    ] {
        if sessions[key].is_object() {
            session.insert(key.into(), json!({}));
        }
    }
    let mut caps = Map::new();
    caps.insert("session".into(), Value::Object(session));
    let mut auth = Map::new();
    if agent["auth"]["status"].is_object() {
        auth.insert("status".into(), json!({}));
    }
    if let Some(meta) = agent["auth"].get("_meta").filter(|m| m.is_object()) {
        auth.insert("_meta".into(), meta.clone());
    }
    caps.insert("auth".into(), Value::Object(auth));
    if agent["providers"].is_object() {
        caps.insert("providers".into(), json!({}));
    }
    if let Some(meta) = agent.get("_meta").filter(|m| m.is_object()) {
        caps.insert("_meta".into(), meta.clone());
    }
    let methods: Vec<Value> = v1["authMethods"]
        .as_array()
        .map(|m| m.iter().filter_map(auth_method).collect())
        .unwrap_or_default();
    let mut out = json!({
        "protocolVersion": 2,
        "info": v1.get("agentInfo").cloned().unwrap_or_else(|| json!({"name": "acplb", "version": env!("CARGO_PKG_VERSION")})),
        "capabilities": caps,
        "authMethods": methods,
    });
    if let Some(Value::Object(meta)) = v1.get("_meta") {
        let mut meta = meta.clone();
        not_on_v2(&mut meta);
        out["_meta"] = Value::Object(meta);
    }
    out
}

/// A v1 auth method (`id`, untagged for the agent's own) as v2's (`methodId`, tagged).
fn auth_method(method: &Value) -> Option<Value> {
    let mut method = method.as_object()?.clone();
    let id = method.remove("id")?;
    method.insert("methodId".into(), id);
    if let Some(Value::Object(env)) = method.remove("env") {
        let env: Vec<Value> = env
            .into_iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        method.insert("env".into(), Value::Array(env));
    }
    match method.get("type").and_then(Value::as_str) {
        None => {
            method.insert("type".into(), json!("agent"));
        }
        Some("agent" | "terminal") => {}
        // An auth method kind v2 does not define: left out rather than mislabelled.
        Some(_) => return None,
    }
    Some(Value::Object(method))
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
