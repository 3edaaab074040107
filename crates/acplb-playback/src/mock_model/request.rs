//! Reading a Responses API request body: which scenario, which step, and the facts message templates quote.

use serde_json::Value;

use super::script::is_scenario_char;

/// The marker that starts a scenario token in a user message.
const TOKEN_PREFIX: &str = "scenario:";

/// How many characters of the last tool output `{last_output}` quotes.
const SNIPPET_CHARS: usize = 160;

/// Item types that answer a tool call; each one advances the scenario by a step.
const TOOL_OUTPUT_TYPES: [&str; 3] = [
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_output",
];

/// How the prompt Codex adds when it goes on toward a thread goal by itself starts (a user
/// message): each one advances the scenario by a step too, so that a goal's turns differ.
const GOAL_CONTINUATION: &str = "<codex_internal_context source=\"goal\">";

/// How the context Codex adds when the user changes the goal (a status, say) starts.
const USER_GOAL: &str = "<codex_internal_context source=\"user_goal\">";

/// What the mock learned from one request body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    /// The last `scenario:<name>` token in a user message, if any.
    pub(crate) scenario: Option<String>,
    /// The number of tool outputs (and goal continuations) after the user message holding that
    /// token.
    pub(crate) step: usize,
    /// The text of the last of those tool outputs.
    pub(crate) last_output: Option<String>,
    /// The number of user prompts in `input` (user messages that are not injected context).
    pub(crate) turns: usize,
    /// Whether this is an `--approve-for-me` reviewer request.
    pub(crate) review: bool,
}

/// Inspects a request body; anything missing or oddly shaped counts as absent.
pub(crate) fn select(body: &Value) -> Selection {
    let input = body
        .get("input")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut anchor = None;
    let mut turns = 0;
    for (index, item) in input.iter().enumerate() {
        let task = is_agent_task(item);
        if !is_user_message(item) && !task {
            continue;
        }
        let parts = text_parts(item);
        if !task && parts.iter().any(|p| is_prompt_part(p)) {
            turns += 1;
        }
        if let Some(name) = parts.iter().filter_map(|p| last_token(p)).next_back() {
            anchor = Some((index, name.to_owned()));
        }
    }
    let (scenario, after) = match anchor {
        Some((index, name)) => (Some(name), &input[index + 1..]),
        None => (None, input),
    };
    // The user made the goal active again since (resumed it): its steps start again, at 1 as
    // after the objective's output. (A pause mid-turn changes nothing.)
    let (after, restart) = match after.iter().rposition(is_resume) {
        Some(at) => (&after[at + 1..], 1),
        None => (after, 0),
    };
    let outputs: Vec<&Value> = after.iter().filter(|item| is_tool_output(item)).collect();
    let continuations = after
        .iter()
        .filter(|item| starts_user_message(item, GOAL_CONTINUATION))
        .count();
    Selection {
        scenario,
        step: restart + outputs.len() + continuations,
        last_output: outputs.last().map(|item| tool_output_text(item)),
        turns,
        review: is_review_request(body),
    }
}

/// Fills a message template: `{last_output}`, `{turns}`, `{history_seen}`, `{scenario}`, `{step}`.
pub(crate) fn render(template: &str, selection: &Selection) -> String {
    let snippet = selection.last_output.as_deref().map(snippet).unwrap_or_default();
    // `{last_output}` goes last so that text quoted from a tool is never itself expanded.
    template
        .replace("{turns}", &selection.turns.to_string())
        .replace(
            "{history_seen}",
            if selection.turns > 1 { "true" } else { "false" },
        )
        .replace("{scenario}", selection.scenario.as_deref().unwrap_or(""))
        .replace("{step}", &selection.step.to_string())
        .replace("{last_output}", &snippet)
}

/// One line of at most [`SNIPPET_CHARS`] characters, newlines shown as ` | `.
fn snippet(text: &str) -> String {
    text.replace('\n', " | ").chars().take(SNIPPET_CHARS).collect()
}

fn is_user_message(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("message")
        && item.get("role").and_then(Value::as_str) == Some("user")
}

/// A message one Codex agent sends another (`agent_message`: a subagent's task, a child's
/// final answer): its text anchors a scenario as a user message does (a subagent's first
/// request holds only its task), but it is no prompt of the user's.
fn is_agent_task(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("agent_message")
}

fn is_tool_output(item: &Value) -> bool {
    item.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TOOL_OUTPUT_TYPES.contains(&t))
}

/// Codex's context for the user making the goal active (a resume).
fn is_resume(item: &Value) -> bool {
    starts_user_message(item, USER_GOAL)
        && text_parts(item)
            .iter()
            .any(|p| p.contains("User set goal status: \"active\""))
}

/// Whether a user message starts with `prefix` (Codex's goal context: a continuation, or the
/// user's change of the goal).
fn starts_user_message(item: &Value, prefix: &str) -> bool {
    is_user_message(item)
        && text_parts(item)
            .iter()
            .any(|p| p.trim_start().starts_with(prefix))
}

/// Codex injects context as user messages too; those are wrapped in tags (`<environment_context>`)
/// or start with an AGENTS.md heading, while the user's own prompt text is not.
fn is_prompt_part(text: &str) -> bool {
    let text = text.trim_start();
    !text.is_empty() && !text.starts_with('<') && !text.starts_with("# AGENTS.md instructions")
}

/// The text parts of a message, whether `content` is a string or a list of parts.
fn text_parts(item: &Value) -> Vec<&str> {
    match item.get("content") {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| {
                matches!(
                    p.get("type").and_then(Value::as_str),
                    Some("input_text" | "output_text" | "encrypted_content")
                )
            })
            // Codex encrypts an agent's task for the model; the mock model reads it in clear.
            .filter_map(|p| {
                p.get("text")
                    .or_else(|| p.get("encrypted_content"))
                    .and_then(Value::as_str)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The last `scenario:<name>` token in `text`.
fn last_token(text: &str) -> Option<&str> {
    text.match_indices(TOKEN_PREFIX)
        .filter_map(|(at, _)| {
            let rest = &text[at + TOKEN_PREFIX.len()..];
            let len = rest.find(|c: char| !is_scenario_char(c)).unwrap_or(rest.len());
            (len > 0).then(|| &rest[..len])
        })
        .last()
}

/// The text of a tool output item: `output` as a string or as content parts, or the found tools.
fn tool_output_text(item: &Value) -> String {
    match item.get("output") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => item.get("tools").map(Value::to_string).unwrap_or_default(),
    }
}

/// `--approve-for-me` asks a reviewer model for `{risk_level, …, outcome}` via a JSON-schema output.
fn is_review_request(body: &Value) -> bool {
    let properties = body.pointer("/text/format/schema/properties");
    properties.is_some_and(|p| p.get("outcome").is_some() && p.get("risk_level").is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(text: &str) -> Value {
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    }

    fn env_context() -> Value {
        user("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>")
    }

    #[test]
    fn no_token_means_no_scenario_and_counts_every_tool_output() {
        let body = json!({"input": [env_context(), user("hello"),
            {"type": "function_call", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": "one"}]});
        let sel = select(&body);
        assert_eq!(sel.scenario, None);
        assert_eq!(sel.step, 1);
        assert_eq!(sel.turns, 1);
        assert!(!sel.review);
    }

    #[test]
    fn the_last_token_in_the_last_user_message_wins_and_steps_count_after_it() {
        let body = json!({"input": [
            json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "scenario:dev"}]}),
            env_context(),
            user("scenario:shell list"),
            {"type": "function_call_output", "call_id": "a", "output": "ignored: before the anchor"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "scenario:assistant"}]},
            user("first scenario:plain then scenario:history, please"),
            {"type": "custom_tool_call_output", "call_id": "b", "output": "patched"},
            {"type": "tool_search_output", "call_id": "c", "tools": [{"type": "namespace", "name": "mcp__x"}]},
            {"type": "function_call_output", "call_id": "d",
             "output": [{"type": "input_text", "text": "Wall time: 1s"}, {"type": "input_text", "text": "echo: hi"}]},
        ]});
        let sel = select(&body);
        assert_eq!(sel.scenario.as_deref(), Some("history"));
        assert_eq!(sel.step, 3);
        assert_eq!(sel.last_output.as_deref(), Some("Wall time: 1s\necho: hi"));
        assert_eq!(sel.turns, 2);
    }

    #[test]
    fn an_agent_task_anchors_a_scenario_and_is_no_turn() {
        let task = json!({"type": "agent_message", "content": [
            {"type": "input_text", "text": "Message Type: NEW_TASK\nTask name: /root/lister\nPayload:\n"},
            {"type": "encrypted_content", "encrypted_content": "scenario:child list files"}]});
        let body = json!({"input": [env_context(), user("scenario:parent go"), task,
            {"type": "function_call_output", "call_id": "a", "output": "ls output"}]});
        let sel = select(&body);
        assert_eq!(sel.scenario.as_deref(), Some("child"));
        assert_eq!(sel.step, 1);
        assert_eq!(sel.turns, 1);
    }

    #[test]
    fn a_goal_continuation_is_a_step_but_no_turn() {
        let body = json!({"input": [
            user("<codex_internal_context source=\"user_goal\">\nUser set the goal: \"x scenario:g\"\n</codex_internal_context>"),
            {"type": "function_call_output", "name": "goal_objective", "output": "x scenario:g"},
            user("<codex_internal_context source=\"goal\">\nContinue working toward the active thread goal.\n</codex_internal_context>")]});
        let s = select(&body);
        assert_eq!(s.scenario.as_deref(), Some("g"));
        assert_eq!(s.step, 2);
        assert_eq!(s.turns, 0);
        assert_eq!(s.last_output.as_deref(), Some("x scenario:g"));
        // Resumed later: the steps start again after the user's change.
        let mut input = body["input"].as_array().unwrap().clone();
        input.push(json!({"type": "function_call_output", "call_id": "u", "output": "done"}));
        input.push(user("<codex_internal_context source=\"user_goal\">\nUser set goal status: \"paused\".\n</codex_internal_context>"));
        assert_eq!(
            select(&json!({ "input": input.clone() })).step,
            3,
            "a pause changes nothing"
        );
        input.push(user("<codex_internal_context source=\"user_goal\">\nUser set goal status: \"active\".\n</codex_internal_context>"));
        input.push(user(
            "<codex_internal_context source=\"goal\">\nContinue.\n</codex_internal_context>",
        ));
        let s = select(&json!({ "input": input }));
        assert_eq!(
            (s.scenario.as_deref(), s.step, s.last_output),
            (Some("g"), 2, None)
        );
    }

    #[test]
    fn tool_search_output_text_is_the_tools_json() {
        let body = json!({"input": [user("scenario:mcp"),
            {"type": "tool_search_output", "call_id": "c", "tools": [{"name": "mcp__x"}]}]});
        assert_eq!(
            select(&body).last_output.as_deref(),
            Some(r#"[{"name":"mcp__x"}]"#)
        );
    }

    #[test]
    fn string_content_and_malformed_bodies_are_tolerated() {
        let body = json!({"input": [{"type": "message", "role": "user", "content": "scenario:plain-2 go"}]});
        assert_eq!(select(&body).scenario.as_deref(), Some("plain-2"));
        assert_eq!(select(&json!({"input": "nope"})), Selection::default());
        assert_eq!(select(&json!([1, 2])), Selection::default());
        assert_eq!(last_token("scenario: spaced"), None);
    }

    #[test]
    fn image_prompts_count_as_turns_and_agents_md_does_not() {
        let image = json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<image name=[Image #1]>"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "describe it"}]});
        let body = json!({"input": [user("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"),
            env_context(), image]});
        assert_eq!(select(&body).turns, 1);
    }

    #[test]
    fn reviewer_requests_are_recognised_by_their_output_schema() {
        let body = json!({"input": [user("scenario:escalate")], "text": {"format": {"type": "json_schema",
            "schema": {"properties": {"risk_level": {}, "outcome": {}, "rationale": {}}}}}});
        assert!(select(&body).review);
        let schema_only = json!({"text": {"format": {"schema": {"properties": {"answer": {}}}}}});
        assert!(!select(&schema_only).review);
    }

    #[test]
    fn render_fills_placeholders_without_expanding_quoted_output() {
        let sel = Selection {
            scenario: Some("shell".into()),
            step: 1,
            last_output: Some(format!("exit 0\n{{turns}}\n{}", "x".repeat(400))),
            turns: 2,
            review: false,
        };
        let text = render(
            "{scenario}/{step} seen={history_seen} turns={turns}: {last_output}",
            &sel,
        );
        let expected_tail: String = "exit 0 | {turns} | "
            .chars()
            .chain("x".repeat(400).chars())
            .take(160)
            .collect();
        assert_eq!(text, format!("shell/1 seen=true turns=2: {expected_tail}"));
        assert_eq!(
            render("seen={history_seen} [{last_output}]", &Selection::default()),
            "seen=false []"
        );
    }
}
