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
    /// What the call asked for that acplb does not apply per session, to say so.
    pub(crate) ignored: Vec<String>,
    /// `base-instructions` then `developer-instructions`, put after whatever plugins inject.
    pub(crate) instructions: Vec<(String, String)>,
}

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
        for key in ["base-instructions", "developer-instructions"] {
            if let Some(text) = string(args, key)?.filter(|t| !t.trim().is_empty()) {
                start.instructions.push((key.to_owned(), text));
            }
        }
        start.tag = string(args, "tag")?.filter(|t| !t.trim().is_empty());
        for key in ["profile", "compact-prompt"] {
            if string(args, key)?.is_some() {
                start.ignored.push(format!("`{key}`"));
            }
        }
        match args.get("include-plan-tool") {
            None | Some(Value::Null | Value::Bool(_)) => {}
            Some(other) => return Err(format!("`include-plan-tool` must be true or false, not {other}")),
        }
        Ok(start)
    }

    /// `config` overrides: the model and its effort apply to this session; the rest are the
    /// process's (`acplb -c`), so they are named as ignored.
    fn config(&mut self, config: &Map<String, Value>) -> Result<(), String> {
        for (key, value) in config {
            match (key.as_str(), value) {
                ("model", Value::String(m)) => self.model = Some(m.clone()),
                ("model_reasoning_effort", Value::String(e)) => self.reasoning_effort = Some(e.clone()),
                ("model" | "model_reasoning_effort", other) => {
                    return Err(format!("`config.{key}` must be a string, not {other}"));
                }
                _ => self.ignored.push(format!("`config.{key}`")),
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

    /// The prompt of the first turn: the caller's instructions, then its prompt. Plugins put
    /// theirs in the session's developer instructions, which this never touches.
    pub(crate) fn first_prompt(&self) -> String {
        let mut text = String::new();
        for (key, body) in &self.instructions {
            text.extend([&format!("<{key}>\n"), body.as_str(), &format!("\n</{key}>\n\n")]);
        }
        text.push_str(&self.prompt);
        text
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
        assert_eq!(s.ignored, ["`config.x`", "`profile`"]);
        assert!(
            s.first_prompt()
                .starts_with("<developer-instructions>\nbe brief\n")
        );
        assert!(s.first_prompt().ends_with("hi"));
        let r = Reply::parse(&obj(json!({"prompt": "x", "conversationId": "c"}))).unwrap();
        assert_eq!(r.thread, "c");
    }
}
