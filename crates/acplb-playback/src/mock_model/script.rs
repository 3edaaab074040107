//! The script format: named scenarios made of steps made of actions, parsed from TOML or JSON and validated.
//!
//! The format is documented with examples in `README.md` next to this file; `builtin.toml` is the
//! built-in script and doubles as the reference example.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::MockError;
use super::action::{Action, Usage, Verdict};

/// The built-in script, compiled in.
const BUILTIN_TOML: &str = include_str!("builtin.toml");

/// The scenario played when a request carries no `scenario:<name>` token.
pub const DEFAULT_SCENARIO: &str = "default";

/// Raw mirror of a script file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptToml {
    #[serde(default)]
    scenarios: BTreeMap<String, ScenarioToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    #[serde(default)]
    description: String,
    #[serde(default)]
    reviewer: Verdict,
    steps: Vec<StepToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepToml {
    #[serde(default)]
    delay_ms: Option<u64>,
    actions: Vec<Action>,
}

/// A validated script: scenarios by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Script {
    scenarios: BTreeMap<String, Scenario>,
}

/// A validated scenario: what the mock answers at each step.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// A one-line description.
    pub description: String,
    /// The reviewer verdict when Codex runs with `--approve-for-me`.
    pub reviewer: Verdict,
    /// Step `n` answers the request that carries `n` tool outputs after the scenario's user message.
    pub steps: Vec<Step>,
}

/// A validated step: either an HTTP error or an event stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Answer with this status and JSON body.
    HttpError {
        /// The HTTP status.
        status: u16,
        /// The JSON body.
        body: Value,
    },
    /// Answer with a Server-Sent Events stream.
    Stream(StreamStep),
}

/// A streamed answer: output items, then how the stream ends.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamStep {
    /// Only item-producing actions (never `usage`, `http_error`, `failed` or `truncate`).
    pub items: Vec<Action>,
    /// The usage in `response.completed`.
    pub usage: Usage,
    /// How the stream ends.
    pub end: StreamEnd,
    /// Overrides the server's delay between events.
    pub delay: Option<Duration>,
}

/// How a stream ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// `response.completed` with usage.
    Completed,
    /// `response.failed` with an error code and message.
    Failed {
        /// The error code.
        code: String,
        /// The error message.
        message: String,
    },
    /// The stream just stops.
    Truncated {
        /// Text of a message left open at the cut.
        partial_text: Option<String>,
    },
}

impl Script {
    /// The built-in scenarios (see `builtin.toml`).
    #[expect(
        clippy::expect_used,
        reason = "the built-in script is a compile-time constant; a unit test parses it"
    )]
    pub fn builtin() -> Script {
        Script::from_toml_str(BUILTIN_TOML, "built-in").expect("the built-in mock script is valid")
    }

    /// Parses and validates a TOML script; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Script, MockError> {
        let raw: ScriptToml = toml::from_str(text).map_err(|e| script_error(origin, e.to_string()))?;
        Script::validate(raw, origin)
    }

    /// Parses and validates a JSON script (same shape as the TOML one).
    pub fn from_json_str(text: &str, origin: &str) -> Result<Script, MockError> {
        let raw: ScriptToml = serde_json::from_str(text).map_err(|e| script_error(origin, e.to_string()))?;
        Script::validate(raw, origin)
    }

    /// Reads a script file: JSON if the name ends in `.json`, TOML otherwise.
    pub fn load(path: &Path) -> Result<Script, MockError> {
        let text = std::fs::read_to_string(path).map_err(|source| MockError::ReadScript {
            path: path.to_path_buf(),
            source,
        })?;
        let origin = path.display().to_string();
        if path.extension().is_some_and(|ext| ext == "json") {
            Script::from_json_str(&text, &origin)
        } else {
            Script::from_toml_str(&text, &origin)
        }
    }

    /// This script with `other`'s scenarios added; a scenario in `other` replaces one of the same name.
    #[must_use]
    pub fn layered_with(mut self, other: Script) -> Script {
        self.scenarios.extend(other.scenarios);
        self
    }

    /// The scenario called `name`.
    pub fn scenario(&self, name: &str) -> Option<&Scenario> {
        self.scenarios.get(name)
    }

    /// All scenario names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.scenarios.keys().map(String::as_str)
    }

    fn validate(raw: ScriptToml, origin: &str) -> Result<Script, MockError> {
        let mut scenarios = BTreeMap::new();
        for (name, scenario) in raw.scenarios {
            if name.is_empty() || !name.chars().all(is_scenario_char) {
                return Err(script_error(
                    origin,
                    format!("scenario name `{name}` may only use letters, digits, `_` and `-`"),
                ));
            }
            if scenario.steps.is_empty() {
                return Err(script_error(origin, format!("scenario `{name}` has no steps")));
            }
            let steps = scenario
                .steps
                .into_iter()
                .enumerate()
                .map(|(index, step)| {
                    validate_step(step)
                        .map_err(|m| script_error(origin, format!("scenario `{name}` step {index}: {m}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            scenarios.insert(
                name,
                Scenario {
                    description: scenario.description,
                    reviewer: scenario.reviewer,
                    steps,
                },
            );
        }
        Ok(Script { scenarios })
    }
}

/// Whether `c` may appear in a scenario name (and so in a `scenario:<name>` token).
pub(crate) fn is_scenario_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn script_error(origin: &str, message: String) -> MockError {
    MockError::Script {
        origin: origin.to_owned(),
        message,
    }
}

fn validate_step(step: StepToml) -> Result<Step, String> {
    let count = step.actions.len();
    if count == 0 {
        return Err("a step needs at least one action".to_owned());
    }
    let mut items = Vec::new();
    let mut usage = Usage::default();
    let mut end = StreamEnd::Completed;
    for (index, action) in step.actions.into_iter().enumerate() {
        let last = index + 1 == count;
        match action {
            Action::HttpError { status, body } => {
                if count != 1 {
                    return Err("`http_error` must be the only action of its step".to_owned());
                }
                if !(400..=599).contains(&status) {
                    return Err(format!("`http_error` status {status} is not between 400 and 599"));
                }
                let body = body.unwrap_or_else(|| {
                    json!({"error": {"message": format!("mock HTTP error {status}"), "type": "mock_error"}})
                });
                return Ok(Step::HttpError { status, body });
            }
            Action::Failed { code, message } if last => end = StreamEnd::Failed { code, message },
            Action::Truncate { partial_text } if last => end = StreamEnd::Truncated { partial_text },
            Action::Failed { .. } | Action::Truncate { .. } => {
                return Err(
                    "`failed` and `truncate` end the stream, so they must be the last action".to_owned(),
                );
            }
            Action::Usage(u) => usage = u,
            Action::Exec { ref cmd, .. } if cmd.trim().is_empty() => {
                return Err("`exec` needs a non-empty `cmd`".to_owned());
            }
            item => items.push(item),
        }
    }
    let delay = step.delay_ms.map(Duration::from_millis);
    Ok(Step::Stream(StreamStep {
        items,
        usage,
        end,
        delay,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_model::action::Phase;

    fn parse(text: &str) -> Result<Script, String> {
        Script::from_toml_str(text, "test.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn builtin_script_parses_and_has_the_documented_scenarios() {
        let script = Script::builtin();
        for name in [
            "default",
            "plain",
            "shell",
            "fail",
            "patch",
            "patch_missing",
            "plan",
            "mcp",
            "websearch",
            "http400",
            "http401",
            "http429",
            "http500",
            "respfailed",
            "ctxwindow",
            "truncated",
            "sleep",
            "history",
            "bigoutput",
            "escalate",
            "escalate_deny",
            "stream_shell",
            "background",
            "background_short",
            "escalate_twice",
            "reasoning",
            "ask",
            "ask_async",
            "ask_async_end",
            "propose_plan",
            "plan_patch",
            "subagent",
            "subagent_child",
            "subagent_fail",
            "subagent_slow",
            "subagent_escalate",
            "subagent_many",
            "subagent_nowait",
            "subagent_child_nap",
            "subagent_leave",
            "subagent_short_wait",
            "subagent_followup",
            "subagent_ask_again",
            "subagent_leave_asking",
            "subagent_child_nap_escalate",
            "subagent_ask_unanswered",
        ] {
            assert!(
                script.scenario(name).is_some(),
                "missing built-in scenario `{name}`"
            );
        }
        let http401 = &script.scenario("http401").unwrap().steps[0];
        assert!(matches!(http401, Step::HttpError { status: 401, .. }));
        assert_eq!(script.scenario("escalate_deny").unwrap().reviewer, Verdict::Deny);
    }

    #[test]
    fn step_validation_builds_stream_steps() {
        let script = parse(
            r#"
            [[scenarios.s.steps]]
            delay_ms = 7
            actions = [
              { type = "message", text = "hi", phase = "commentary" },
              { type = "usage", input_tokens = 5 },
              { type = "failed", code = "server_error", message = "boom" },
            ]
            "#,
        )
        .unwrap();
        let Step::Stream(step) = &script.scenario("s").unwrap().steps[0] else {
            panic!("not a stream")
        };
        assert_eq!(
            step.items,
            vec![Action::Message {
                text: "hi".into(),
                phase: Phase::Commentary
            }]
        );
        assert_eq!(
            step.usage,
            Usage {
                input_tokens: 5,
                ..Usage::default()
            }
        );
        assert_eq!(
            step.end,
            StreamEnd::Failed {
                code: "server_error".into(),
                message: "boom".into()
            }
        );
        assert_eq!(step.delay, Some(Duration::from_millis(7)));
    }

    #[test]
    fn errors_name_the_origin_scenario_and_step() {
        let err = parse(
            r#"
            [[scenarios.s.steps]]
            actions = [{ type = "message", text = "a" }]
            [[scenarios.s.steps]]
            actions = [{ type = "message", text = "b" }, { type = "http_error", status = 500 }]
            "#,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "invalid mock script `test.toml`: scenario `s` step 1: `http_error` must be the only action of its step"
        );

        let err = parse("[[scenarios.s.steps]]\nactions = [{ type = \"truncate\" }, { type = \"message\", text = \"x\" }]")
            .unwrap_err();
        assert!(err.contains("must be the last action"), "{err}");

        let err =
            parse("[[scenarios.s.steps]]\nactions = [{ type = \"message\", txt = \"x\" }]").unwrap_err();
        assert!(
            err.starts_with("invalid mock script `test.toml`: TOML parse error at line 2"),
            "{err}"
        );
        assert!(err.contains("unknown field `txt`"), "{err}");

        let err = parse("[scenarios.s]\nsteps = []\n").unwrap_err();
        assert!(err.contains("scenario `s` has no steps"), "{err}");

        let err = parse("[[scenarios.\"a b\".steps]]\nactions = [{ type = \"message\", text = \"x\" }]")
            .unwrap_err();
        assert!(err.contains("scenario name `a b`"), "{err}");

        let err =
            parse("[[scenarios.s.steps]]\nactions = [{ type = \"http_error\", status = 200 }]").unwrap_err();
        assert!(err.contains("status 200 is not between 400 and 599"), "{err}");
    }

    #[test]
    fn json_scripts_and_layering() {
        let json =
            r#"{"scenarios": {"plain": {"steps": [{"actions": [{"type": "message", "text": "mine"}]}]}}}"#;
        let mine = Script::from_json_str(json, "mine.json").unwrap();
        let script = Script::builtin().layered_with(mine);
        let Step::Stream(step) = &script.scenario("plain").unwrap().steps[0] else {
            panic!("not a stream")
        };
        assert_eq!(
            step.items,
            vec![Action::Message {
                text: "mine".into(),
                phase: Phase::FinalAnswer
            }]
        );
        assert!(script.scenario("shell").is_some());
    }
}
