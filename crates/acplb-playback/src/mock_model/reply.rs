//! Deciding the answer to one `/responses` request: the scenario step, rendered into events or an HTTP error.

use std::time::Duration;

use serde_json::{Value, json};

use super::action::{Action, Usage, Verdict};
use super::request::{Selection, render};
use super::script::{DEFAULT_SCENARIO, Script, Step, StreamEnd, StreamStep};
use super::sse::{IdGen, ResponseEvents, SseEvent};

/// What the server sends back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reply {
    /// A JSON body with this status.
    Http { status: u16, body: Value },
    /// A `200 text/event-stream` with these events; `delay` overrides the server's delay.
    Stream {
        events: Vec<SseEvent>,
        delay: Option<Duration>,
    },
}

/// The reply of `script` to a request described by `selection`.
pub(crate) fn plan_reply(script: &Script, selection: &Selection, model: &str, ids: &IdGen) -> Reply {
    let name = selection.scenario.as_deref().unwrap_or(DEFAULT_SCENARIO);
    let scenario = script.scenario(name);
    if selection.review {
        let verdict = scenario.map_or(Verdict::Allow, |s| s.reviewer);
        return single_message(ids, model, &review_verdict(verdict));
    }
    let Some(scenario) = scenario else {
        let text = match &selection.scenario {
            Some(name) => format!("Unknown scenario `{name}` (step {}).", selection.step),
            None => "Hello from the mock model.".to_owned(),
        };
        return single_message(ids, model, &text);
    };
    match scenario.steps.get(selection.step) {
        Some(Step::HttpError { status, body }) => Reply::Http {
            status: *status,
            body: body.clone(),
        },
        Some(Step::Stream(step)) => Reply::Stream {
            events: stream_events(step, selection, model, ids),
            delay: step.delay,
        },
        // Ending the turn is the only safe answer: repeating a tool call would loop forever.
        None => single_message(
            ids,
            model,
            &format!("Scenario `{name}` has no step {}.", selection.step),
        ),
    }
}

fn single_message(ids: &IdGen, model: &str, text: &str) -> Reply {
    let mut events = ResponseEvents::start(ids, model);
    events.message(text, "final_answer");
    Reply::Stream {
        events: events.completed(Usage::default()),
        delay: None,
    }
}

/// The JSON answer of the `--approve-for-me` reviewer.
fn review_verdict(verdict: Verdict) -> String {
    let value = match verdict {
        Verdict::Allow => json!({"risk_level": "low", "user_authorization": "high", "outcome": "allow",
            "rationale": "mock reviewer: allowed"}),
        Verdict::Deny => json!({"risk_level": "high", "user_authorization": "low", "outcome": "deny",
            "rationale": "mock reviewer: denied"}),
    };
    value.to_string()
}

fn stream_events(step: &StreamStep, selection: &Selection, model: &str, ids: &IdGen) -> Vec<SseEvent> {
    let mut events = ResponseEvents::start(ids, model);
    for action in &step.items {
        push_item(&mut events, action, selection);
    }
    match &step.end {
        StreamEnd::Completed => events.completed(step.usage),
        StreamEnd::Failed { code, message } => events.failed(code, message),
        StreamEnd::Truncated { partial_text } => events.truncated(partial_text.as_deref()),
    }
}

fn push_item(events: &mut ResponseEvents<'_>, action: &Action, selection: &Selection) {
    match action {
        Action::Reasoning { text, more_parts } => {
            let parts: Vec<&str> = std::iter::once(text.as_str())
                .chain(more_parts.iter().map(String::as_str))
                .collect();
            events.reasoning(&parts);
        }
        Action::Message { text, phase } => events.message(&render(text, selection), phase.as_str()),
        Action::Exec {
            cmd,
            sandbox_permissions,
            justification,
            yield_time_ms,
        } => {
            let mut args = json!({"cmd": cmd, "yield_time_ms": yield_time_ms});
            if let Some(permissions) = sandbox_permissions {
                args["sandbox_permissions"] = json!(permissions);
            }
            if let Some(justification) = justification {
                args["justification"] = json!(justification);
            }
            events.function_call("exec_command", None, &args.to_string());
        }
        Action::ApplyPatch { patch } => events.custom_tool_call("apply_patch", patch),
        Action::UpdatePlan { explanation, plan } => {
            let plan: Vec<Value> = plan
                .iter()
                .map(|p| json!({"step": p.step, "status": p.status.as_str()}))
                .collect();
            let mut args = json!({"plan": plan});
            if let Some(explanation) = explanation {
                args["explanation"] = json!(explanation);
            }
            events.function_call("update_plan", None, &args.to_string());
        }
        Action::ToolSearch { query, limit } => events.tool_search_call(query, *limit),
        Action::McpCall {
            server,
            tool,
            arguments,
        } => {
            events.function_call(tool, Some(&format!("mcp__{server}")), &arguments.to_string());
        }
        Action::FunctionCall {
            name,
            namespace,
            arguments,
        } => {
            events.function_call(name, namespace.as_deref(), &arguments.to_string());
        }
        Action::CustomToolCall { name, input } => events.custom_tool_call(name, input),
        Action::WebSearch { query } => events.web_search_call(query),
        // Validation moves these out of `items` into the step's usage, ending or HTTP reply.
        Action::Usage(_) | Action::HttpError { .. } | Action::Failed { .. } | Action::Truncate { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(scenario: Option<&str>, step: usize) -> Selection {
        Selection {
            scenario: scenario.map(str::to_owned),
            step,
            ..Selection::default()
        }
    }

    fn events(reply: Reply) -> Vec<SseEvent> {
        match reply {
            Reply::Stream { events, .. } => events,
            Reply::Http { status, .. } => panic!("unexpected HTTP {status}"),
        }
    }

    fn done_items(events: &[SseEvent]) -> Vec<Value> {
        events
            .iter()
            .filter(|e| e.kind() == "response.output_item.done")
            .map(|e| e.data["item"].clone())
            .collect()
    }

    #[test]
    fn shell_step_zero_calls_exec_command_and_step_one_quotes_the_output() {
        let script = Script::builtin();
        let ids = IdGen::default();
        let items = done_items(&events(plan_reply(
            &script,
            &sel(Some("shell"), 0),
            "gpt-5.5",
            &ids,
        )));
        let types: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["reasoning", "message", "function_call"]);
        assert_eq!(items[1]["phase"], "commentary");
        assert_eq!(items[2]["name"], "exec_command");
        assert_eq!(items[2]["arguments"], r#"{"cmd":"ls -la","yield_time_ms":2000}"#);

        let mut step1 = sel(Some("shell"), 1);
        step1.last_output = Some("Process exited with code 0\nOutput:\nREADME.md".into());
        let items = done_items(&events(plan_reply(&script, &step1, "gpt-5.5", &ids)));
        assert_eq!(
            items[0]["content"][0]["text"],
            "The directory listing succeeded. Output began: Process exited with code 0 | Output: | README.md"
        );
    }

    #[test]
    fn plan_escalate_and_mcp_arguments() {
        let script = Script::builtin();
        let ids = IdGen::default();
        let plan = done_items(&events(plan_reply(&script, &sel(Some("plan"), 0), "m", &ids)));
        assert_eq!(plan[0]["name"], "update_plan");
        let args: Value = serde_json::from_str(plan[0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(
            args["plan"][0],
            json!({"step": "Inspect repo", "status": "in_progress"})
        );
        assert_eq!(args["explanation"], "Three small steps.");

        let escalate = done_items(&events(plan_reply(&script, &sel(Some("escalate"), 0), "m", &ids)));
        let args: Value = serde_json::from_str(escalate[0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["sandbox_permissions"], "require_escalated");

        let mcp = done_items(&events(plan_reply(&script, &sel(Some("mcp"), 1), "m", &ids)));
        assert_eq!(mcp[0]["namespace"], "mcp__mockmcp");
        assert_eq!(mcp[0]["name"], "echo");
    }

    #[test]
    fn http_errors_unknown_scenarios_and_missing_steps() {
        let script = Script::builtin();
        let ids = IdGen::default();
        let Reply::Http { status, body } = plan_reply(&script, &sel(Some("http429"), 0), "m", &ids) else {
            panic!("expected an HTTP reply")
        };
        assert_eq!(status, 429);
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");

        let unknown = done_items(&events(plan_reply(&script, &sel(Some("nope"), 2), "m", &ids)));
        assert_eq!(
            unknown[0]["content"][0]["text"],
            "Unknown scenario `nope` (step 2)."
        );
        let past_end = done_items(&events(plan_reply(&script, &sel(Some("plain"), 1), "m", &ids)));
        assert_eq!(
            past_end[0]["content"][0]["text"],
            "Scenario `plain` has no step 1."
        );
        let fallback = done_items(&events(plan_reply(&script, &sel(None, 0), "m", &ids)));
        assert_eq!(fallback[0]["content"][0]["text"], "Hello from the mock model.");
        let no_default = done_items(&events(plan_reply(&Script::default(), &sel(None, 0), "m", &ids)));
        assert_eq!(no_default[0]["content"][0]["text"], "Hello from the mock model.");
    }

    #[test]
    fn reviewer_requests_get_the_scenario_verdict() {
        let script = Script::builtin();
        let ids = IdGen::default();
        for (scenario, outcome) in [
            ("escalate", "allow"),
            ("escalate_deny", "deny"),
            ("nope", "allow"),
        ] {
            let mut selection = sel(Some(scenario), 0);
            selection.review = true;
            let items = done_items(&events(plan_reply(&script, &selection, "m", &ids)));
            let verdict: Value =
                serde_json::from_str(items[0]["content"][0]["text"].as_str().unwrap()).unwrap();
            assert_eq!(verdict["outcome"], outcome, "scenario {scenario}");
        }
    }

    #[test]
    fn failure_endings() {
        let script = Script::builtin();
        let ids = IdGen::default();
        let failed = events(plan_reply(&script, &sel(Some("ctxwindow"), 0), "m", &ids));
        assert_eq!(
            failed.last().unwrap().data["response"]["error"]["code"],
            "context_length_exceeded"
        );
        let truncated = events(plan_reply(&script, &sel(Some("truncated"), 0), "m", &ids));
        assert!(
            truncated
                .iter()
                .all(|e| !matches!(e.kind(), "response.completed" | "response.failed"))
        );
        assert_eq!(
            truncated.last().unwrap().data["delta"],
            "This answer is cut off mid"
        );
    }
}
