//! What a client declared beyond ACP's typed capabilities: the conventions it advertises in
//! `clientCapabilities._meta`.

use agent_client_protocol::v1::schema::{AvailableCommand, ClientCapabilities};
use serde_json::Value;

/// The `_meta` key with which Zed asks for command output as live terminals (ADR 0033).
pub const TERMINAL_OUTPUT: &str = "terminal_output";

/// Whether the client renders command output as Zed's display-only terminals: it advertised
/// `clientCapabilities._meta.terminal_output: true`. Any other value (absent, `false`, the
/// string `"true"`, an object) means no: the client keeps text content.
pub fn terminal_output(client: &ClientCapabilities) -> bool {
    match client.meta.as_ref().and_then(|m| m.get(TERMINAL_OUTPUT)) {
        Some(Value::Bool(b)) => *b,
        None => false,
        Some(other) => {
            tracing::warn!(
                value = %other,
                "clientCapabilities._meta.terminal_output is not a boolean; command output stays text"
            );
            false
        }
    }
}

/// The `_meta` keys of `JetBrains` AIR's extension: `clientCapabilities._meta.jetbrains.air`.
pub const JETBRAINS: &str = "jetbrains";
/// See [`JETBRAINS`].
pub const AIR: &str = "air";

/// What a `JetBrains` AIR client declared (ADR 0049): a client is AIR when
/// `clientCapabilities._meta.jetbrains.air` is a JSON object; it declares an AIR extension
/// capability (`diffPatch`, `asyncTasks`, …) only when that object also has an integer
/// `version` of at least 1 and lists the name in its `capabilities` array, as the TS peer reads
/// it. Anything else there (a string, an array, a wrong version, names acplb does not know)
/// leaves a client plain, or AIR without capabilities.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Air {
    /// The capability names declared, when the version allows any (strings only).
    pub capabilities: Vec<String>,
}

impl Air {
    /// Whether the client declared the AIR capability `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.capabilities.iter().any(|c| c == name)
    }
}

/// `{"jetbrains": {"air": {"version": 1, key: value}}}`: one AIR key as the TS peer writes it
/// into a `_meta` (always with the extension's version).
pub fn air_meta(key: &str, value: Value) -> serde_json::Map<String, Value> {
    let mut air = serde_json::Map::new();
    air.insert("version".to_owned(), Value::from(1));
    air.insert(key.to_owned(), value);
    let mut meta = serde_json::Map::new();
    meta.insert(JETBRAINS.to_owned(), serde_json::json!({ AIR: air }));
    meta
}

/// The value of AIR key `key` in `meta` (`{"jetbrains": {"air": {key: value}}}`), as
/// [`air_meta`] writes it.
pub fn air_value<'a>(meta: Option<&'a serde_json::Map<String, Value>>, key: &str) -> Option<&'a Value> {
    meta?.get(JETBRAINS)?.get(AIR)?.get(key)
}

/// Whether the client is AIR and declared the AIR capability `name`.
pub fn air_declares(client: &ClientCapabilities, name: &str) -> bool {
    air(client).is_some_and(|a| a.declares(name))
}

/// The slash commands as a client gets them: one that is not AIR gets none of the
/// `_meta.jetbrains` a provider gave its commands (AIR's `commandAction`, `skillPath`; ADR
/// 0049), and no `_meta` where that was all of it.
pub fn commands_for(air: bool, mut commands: Vec<AvailableCommand>) -> Vec<AvailableCommand> {
    if !air {
        for command in &mut commands {
            if let Some(meta) = &mut command.meta {
                meta.remove(JETBRAINS);
                if meta.is_empty() {
                    command.meta = None;
                }
            }
        }
    }
    commands
}

/// The AIR extension the client declared, `None` for a client that is not AIR.
pub fn air(client: &ClientCapabilities) -> Option<Air> {
    let air = client.meta.as_ref()?.get(JETBRAINS)?.get(AIR)?.as_object()?;
    let versioned = air
        .get("version")
        .and_then(Value::as_f64)
        .is_some_and(|v| v.fract() == 0.0 && v >= 1.0);
    let capabilities = match air.get("capabilities") {
        Some(Value::Array(names)) if versioned => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    Some(Air { capabilities })
}

/// Whether the client takes ACP's compaction updates: it advertised
/// `clientCapabilities.session.compaction` as an object (`{}`). The SDK reads any other value
/// (`true`, a string) as absent, so such a client keeps notices.
pub fn compaction(client: &ClientCapabilities) -> bool {
    client.session.as_ref().is_some_and(|s| s.compaction.is_some())
}

/// The AIR capability of plan updates that carry only the new text (ADR 0053).
pub const AIR_PLAN_CONTENT_DELTA: &str = "planContentDelta";

/// The AIR `_meta` key of the new text such an update carries.
pub const AIR_CONTENT_DELTA: &str = "contentDelta";

/// Whether the client takes `plan_update` (and `plan_removed`): it advertised
/// `clientCapabilities.plan` as an object (ACP's unstable plan operations; every v2 client
/// does, see `acp2/requests.rs`). Only such a client may get a plan as markdown (ADR 0053).
pub fn plan_updates(client: &ClientCapabilities) -> bool {
    client.plan.is_some()
}

/// Whether the client takes a plan update that carries only the new text: it takes plan
/// updates and declared AIR's `planContentDelta`.
pub fn plan_deltas(client: &ClientCapabilities) -> bool {
    plan_updates(client) && air_declares(client, AIR_PLAN_CONTENT_DELTA)
}

/// The AIR capability of subagents as sessions of their own, announced in AIR's shapes
/// (ADR 0055).
pub const AIR_NATIVE_SUBAGENT_SESSIONS: &str = "nativeSubagentSessions";

/// A key of a client's `_meta` that asks for ACP's subagent shape whatever else it declares:
/// the v2 face sets it, as v2 has that shape only (ADR 0061).
pub const ACP_SUBAGENTS: &str = "acplb/acpSubagents";

/// How a client takes a subagent as an ACP session of its own (ADR 0055).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubagentSessions {
    /// ACP's unstable subagents: `subagent_update`, a child known by
    /// `<parent>:subagent:<thread>`.
    Acp,
    /// `JetBrains` AIR's: `subagent_spawned` and `subagent_state_update`, a child known by its
    /// thread's id, and the parent's turn answered once its children finished.
    Air,
}

/// Whether and how the client takes subagent sessions, as the TS peer decides it: AIR's shapes
/// when it declared `nativeSubagentSessions`, or is AIR and advertised ACP's subagents; ACP's
/// when it advertised `clientCapabilities.subagents` as an object (`{}`; the SDK reads any
/// other value, `true`, as absent); else none (its subagents stay tool calls). ACP's whatever
/// else it declares when its `_meta` says [`ACP_SUBAGENTS`] (the v2 face).
pub fn subagent_sessions(client: &ClientCapabilities) -> Option<SubagentSessions> {
    let acp_only = client
        .meta
        .as_ref()
        .and_then(|m| m.get(ACP_SUBAGENTS))
        .and_then(Value::as_bool)
        == Some(true);
    if acp_only {
        Some(SubagentSessions::Acp)
    } else if air_declares(client, AIR_NATIVE_SUBAGENT_SESSIONS)
        || air(client).is_some() && client.subagents.is_some()
    {
        Some(SubagentSessions::Air)
    } else if client.subagents.is_some() {
        Some(SubagentSessions::Acp)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn caps(meta: &Value) -> ClientCapabilities {
        serde_json::from_value(json!({ "_meta": meta })).unwrap()
    }

    #[test]
    fn only_a_true_boolean_asks_for_terminals() {
        assert!(terminal_output(&caps(&json!({"terminal_output": true}))));
        assert!(!terminal_output(&caps(&json!({"terminal_output": false}))));
        assert!(!terminal_output(&caps(&json!({"terminal_output": "true"}))));
        let object = json!({"terminal_output": {"enabled": true}});
        assert!(!terminal_output(&caps(&object)));
        assert!(!terminal_output(&caps(&json!({"terminal_output_delta": true}))));
        assert!(!terminal_output(&ClientCapabilities::default()));
    }

    #[test]
    fn plan_updates_need_the_plan_object() {
        let of = |value: Value| plan_updates(&serde_json::from_value(value).unwrap());
        assert!(of(json!({"plan": {}})));
        assert!(!of(json!({})));
        assert!(!of(json!({"plan": null})));
        assert!(!of(json!({"plan": true})), "the SDK reads a non-object as absent");
    }

    #[test]
    fn air_is_an_object_and_its_capabilities_need_a_version() {
        let of = |value: Value| air(&caps(&json!({ "jetbrains": { "air": value } })));
        let full = of(json!({ "version": 1, "capabilities": ["diffPatch", 7, "nonsense"] }));
        assert_eq!(full.as_ref().map(|a| a.declares("diffPatch")), Some(true));
        assert_eq!(full.as_ref().map(|a| a.declares("nonsense")), Some(true));
        assert_eq!(full.map(|a| a.capabilities.len()), Some(2));
        let later = of(json!({ "version": 2.0, "capabilities": ["diffPatch"] }));
        assert!(later.is_some_and(|a| a.declares("diffPatch")));
        for unversioned in [
            json!({ "capabilities": ["diffPatch"] }),
            json!({ "version": 0, "capabilities": ["diffPatch"] }),
            json!({ "version": 1.5, "capabilities": ["diffPatch"] }),
            json!({ "version": "1", "capabilities": ["diffPatch"] }),
            json!({ "version": 1, "capabilities": "diffPatch" }),
        ] {
            assert_eq!(of(unversioned), Some(Air::default()));
        }
        for plain in [json!("air"), json!(["diffPatch"]), json!(null), json!(true)] {
            assert_eq!(of(plain), None);
        }
        assert_eq!(air(&caps(&json!({ "jetbrains": "air" }))), None);
        assert_eq!(air(&ClientCapabilities::default()), None);
    }

    #[test]
    fn only_air_keeps_the_air_keys_of_commands() {
        let mut both = air_meta("commandAction", json!({ "kind": "prefixPrompt" }));
        both.insert("other".into(), json!(1));
        let commands = vec![
            AvailableCommand::new("goal", "g").meta(air_meta("commandAction", json!({}))),
            AvailableCommand::new("x", "x").meta(both),
            AvailableCommand::new("plain", "p"),
        ];
        assert_eq!(commands_for(true, commands.clone()), commands);
        let plain = serde_json::to_value(commands_for(false, commands)).unwrap();
        assert_eq!(
            plain,
            json!([
                { "name": "goal", "description": "g" },
                { "name": "x", "description": "x", "_meta": { "other": 1 } },
                { "name": "plain", "description": "p" },
            ])
        );
    }

    #[test]
    fn only_an_object_asks_for_compaction_updates() {
        let with = |session: &Value| -> ClientCapabilities {
            serde_json::from_value(json!({ "session": session })).unwrap()
        };
        assert!(compaction(&with(&json!({"compaction": {}}))));
        assert!(!compaction(&with(&json!({"compaction": null}))));
        assert!(!compaction(&with(&json!({"compaction": true}))));
        assert!(!compaction(&with(&json!({"compaction": "yes"}))));
        assert!(!compaction(&with(&json!({}))));
        assert!(!compaction(&ClientCapabilities::default()));
    }
}
