//! The tools' arguments, read by hand from the call's JSON object so that every mistake (a
//! missing `prompt`, a number where a string belongs, a relative `cwd`) is a tool error that
//! names the argument, never a protocol error or a crash. Names are `codex mcp-server`'s.

use std::path::PathBuf;

use acplb_core::permission::Mode;
use serde_json::{Map, Value};

/// `codex`: a new thread and its first turn.
#[derive(Debug, Default)]
pub(crate) struct Start {
    pub(crate) prompt: String,
    pub(crate) model: Option<String>,
    pub(crate) cwd: Option<PathBuf>,
    /// From `sandbox`.
    pub(crate) mode: Option<Mode>,
    /// `approval-policy = "never"`: approval requests are declined without asking.
    pub(crate) never_ask: bool,
    /// The call named an approval policy (the server's `--role` default does not apply).
    pub(crate) approval_given: bool,
    /// `config` entries acplb applies per session (`model`, `model_reasoning_effort`).
    pub(crate) reasoning_effort: Option<String>,
    /// `tag`: a label kept in the thread's registry entry.
    pub(crate) tag: Option<String>,
    /// `developer-instructions`: Codex's developer message, with what plugins inject after.
    pub(crate) developer_instructions: Option<String>,
    /// `base-instructions`: in place of the model's own.
    pub(crate) base_instructions: Option<String>,
    /// `profile`: a Codex profile (`<codex home>/<profile>.config.toml`).
    pub(crate) profile: Option<String>,
    /// Codex config overrides for the thread: `config` (but the model and its effort, which
    /// are session options), `compact-prompt`, `include-plan-tool`.
    pub(crate) codex_config: Map<String, Value>,
}

/// The `session/new` `_meta` key the Codex provider reads a session's own instructions and
/// config from (its `caller.rs`).
const CODEX_META: &str = "acplb/codex";

/// `codex-reply`: one more turn of a thread.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) prompt: String,
    pub(crate) thread: String,
}

const START_KEYS: [&str; 12] = [
    "prompt",
    "model",
    "profile",
    "cwd",
    "approval-policy",
    "sandbox",
    "config",
    "base-instructions",
    "developer-instructions",
    "compact-prompt",
    "include-plan-tool",
    "tag",
];

impl Start {
    pub(crate) fn parse(args: &Map<String, Value>) -> Result<Start, String> {
        unknown(args, &START_KEYS)?;
        let mut start = Start {
            prompt: prompt(args)?,
            model: string(args, "model")?,
            ..Start::default()
        };
        if let Some(cwd) = string(args, "cwd")? {
            let path = PathBuf::from(&cwd);
            if !path.is_absolute() {
                return Err(format!("`cwd` must be an absolute path, not `{cwd}`"));
            }
            start.cwd = Some(path);
        }
        start.mode = string(args, "sandbox")?
            .map(|s| match s.as_str() {
                "read-only" => Ok(Mode::ReadOnly),
                "workspace-write" => Ok(Mode::Auto),
                "danger-full-access" => Ok(Mode::FullAccess),
                _ => Err(format!(
                    "`sandbox` must be `read-only`, `workspace-write` or `danger-full-access`, not `{s}`"
                )),
            })
            .transpose()?;
        if let Some(policy) = string(args, "approval-policy")? {
            start.approval_given = true;
            match policy.as_str() {
                "untrusted" | "on-failure" | "on-request" => {}
                "never" => start.never_ask = true,
                _ => {
                    return Err(format!(
                        "`approval-policy` must be `untrusted`, `on-failure`, `on-request` or `never`, not `{policy}`"
                    ));
                }
            }
        }
        if let Some(config) = object(args, "config")? {
            start.config(config)?;
        }
        start.developer_instructions =
            string(args, "developer-instructions")?.filter(|t| !t.trim().is_empty());
        start.base_instructions = string(args, "base-instructions")?.filter(|t| !t.trim().is_empty());
        start.tag = string(args, "tag")?.filter(|t| !t.trim().is_empty());
        start.profile = string(args, "profile")?;
        if let Some(value) = string(args, "compact-prompt")? {
            start
                .codex_config
                .insert("compact_prompt".into(), Value::String(value));
        }
        match args.get("include-plan-tool") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(on)) => {
                start
                    .codex_config
                    .insert("tools.update_plan.enabled".into(), Value::Bool(*on));
            }
            Some(other) => return Err(format!("`include-plan-tool` must be true or false, not {other}")),
        }
        Ok(start)
    }

    /// `config` overrides: the model and its effort are the session's options; the rest go to
    /// Codex for this thread.
    fn config(&mut self, config: &Map<String, Value>) -> Result<(), String> {
        for (key, value) in config {
            match (key.as_str(), value) {
                ("model", Value::String(m)) => self.model = Some(m.clone()),
                ("model_reasoning_effort", Value::String(e)) => self.reasoning_effort = Some(e.clone()),
                ("model" | "model_reasoning_effort", other) => {
                    return Err(format!("`config.{key}` must be a string, not {other}"));
                }
                _ => {
                    self.codex_config.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(())
    }

    /// Whether approvals are declined without asking: the call's `approval-policy`, else the
    /// server's default (its `--role`).
    pub(crate) fn declines(&self, default: bool) -> bool {
        if self.approval_given {
            self.never_ask
        } else {
            default
        }
    }

    /// The `session/new` `_meta` that carries the call's instructions and config to Codex
    /// (none when the call has neither).
    pub(crate) fn meta(&self) -> Option<Map<String, Value>> {
        let mut ours = Map::new();
        if let Some(text) = &self.developer_instructions {
            ours.insert("developerInstructions".into(), Value::String(text.clone()));
        }
        if let Some(text) = &self.base_instructions {
            ours.insert("baseInstructions".into(), Value::String(text.clone()));
        }
        if let Some(profile) = &self.profile {
            ours.insert("profile".into(), Value::String(profile.clone()));
        }
        if !self.codex_config.is_empty() {
            ours.insert("config".into(), Value::Object(self.codex_config.clone()));
        }
        (!ours.is_empty()).then(|| Map::from_iter([(CODEX_META.to_owned(), Value::Object(ours))]))
    }

    /// What a thread that already exists (`--resume`) cannot take any more, to say so.
    pub(crate) fn not_for_resumed(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.developer_instructions.is_some() {
            names.push("`developer-instructions`");
        }
        if self.base_instructions.is_some() {
            names.push("`base-instructions`");
        }
        if !self.codex_config.is_empty() || self.profile.is_some() {
            names.push("`config`, `profile`, `compact-prompt`, `include-plan-tool`");
        }
        names
    }
}

impl Reply {
    pub(crate) fn parse(args: &Map<String, Value>) -> Result<Reply, String> {
        unknown(args, &["prompt", "threadId", "conversationId"])?;
        let prompt = prompt(args)?;
        let thread = match (string(args, "threadId")?, string(args, "conversationId")?) {
            (Some(t), Some(c)) if t != c => {
                return Err(format!(
                    "`threadId` (`{t}`) and `conversationId` (`{c}`) name different threads; give one"
                ));
            }
            (Some(t), _) | (None, Some(t)) => t,
            (None, None) => return Err("`threadId` is required (or `conversationId`, its older name)".into()),
        };
        Ok(Reply { prompt, thread })
    }
}

fn unknown(args: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "unknown argument `{k}`; this tool takes {}",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

fn prompt(args: &Map<String, Value>) -> Result<String, String> {
    match string(args, "prompt")? {
        Some(p) if !p.trim().is_empty() => Ok(p),
        Some(_) => Err("`prompt` is empty".into()),
        None => Err("`prompt` is required".into()),
    }
}

pub(crate) fn string(args: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("`{key}` must be a string, not {other}")),
    }
}

fn object<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a Map<String, Value>>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(other) => Err(format!("`{key}` must be an object, not {other}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(o) => o,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn bad_arguments_name_themselves() {
        let err = |v| Start::parse(&obj(v)).unwrap_err();
        assert!(err(json!({})).contains("`prompt` is required"));
        assert!(err(json!({"prompt": 5})).contains("`prompt` must be a string"));
        assert!(err(json!({"prompt": "x", "cwd": "rel/dir"})).contains("absolute"));
        assert!(err(json!({"prompt": "x", "sandbox": "none"})).contains("`sandbox`"));
        assert!(err(json!({"prompt": "x", "config": []})).contains("`config` must be an object"));
        assert!(err(json!({"prompt": "x", "bogus": 1})).contains("unknown argument `bogus`"));
        let reply = |v| Reply::parse(&obj(v)).unwrap_err();
        assert!(reply(json!({"prompt": "x"})).contains("`threadId` is required"));
        assert!(reply(json!({"prompt": "x", "threadId": "a", "conversationId": "b"})).contains("different"));
    }

    #[test]
    fn codex_mcp_server_arguments_map_onto_a_session() {
        let s = Start::parse(&obj(json!({
            "prompt": "hi", "sandbox": "workspace-write", "approval-policy": "never",
            "config": {"model": "m", "model_reasoning_effort": "low", "x": 1},
            "developer-instructions": "be brief", "profile": "p"
        })))
        .unwrap();
        assert_eq!(s.mode, Some(Mode::Auto));
        assert!(s.never_ask);
        assert_eq!(s.model.as_deref(), Some("m"));
        assert_eq!(s.reasoning_effort.as_deref(), Some("low"));
        let meta = Value::Object(s.meta().unwrap());
        assert_eq!(
            meta,
            json!({"acplb/codex": {"developerInstructions": "be brief", "profile": "p",
                                   "config": {"x": 1}}})
        );
        let plain = Start::parse(&obj(json!({"prompt": "hi", "include-plan-tool": false}))).unwrap();
        assert_eq!(
            Value::Object(plain.meta().unwrap()),
            json!({"acplb/codex": {"config": {"tools.update_plan.enabled": false}}})
        );
        assert!(
            Start::parse(&obj(json!({"prompt": "hi"})))
                .unwrap()
                .meta()
                .is_none()
        );
        let r = Reply::parse(&obj(json!({"prompt": "x", "conversationId": "c"}))).unwrap();
        assert_eq!(r.thread, "c");
    }
}
