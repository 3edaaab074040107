//! Warnings about a scenario's provider side that are legal but worth a look: stdout lines that
//! are not JSON, event types Codex 0.169.0 does not print, a process that stops mid-stream.

use serde_json::Value;

use super::{End, EventKind, Scenario};

/// The top-level event types of `codex exec --json` 0.169.0.
pub const KNOWN_EVENT_TYPES: [&str; 8] = [
    "thread.started",
    "turn.started",
    "item.started",
    "item.updated",
    "item.completed",
    "turn.completed",
    "turn.failed",
    "error",
];

/// One warning, with the line it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line in the scenario file (0 when built in memory).
    pub line: usize,
    /// What is odd, in words.
    pub message: String,
}

/// Every warning for `scenario`, in file order.
pub fn warnings(scenario: &Scenario) -> Vec<Warning> {
    let mut out = Vec::new();
    for (index, run) in scenario.codex.iter().enumerate() {
        let n = index + 1;
        let mut ended = false;
        let mut last_line = run.line;
        for event in &run.events {
            last_line = event.line;
            let EventKind::Stdout(line) = &event.kind else {
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(line) {
                Ok(value) => match value.get("type").and_then(Value::as_str) {
                    Some("turn.completed" | "turn.failed") => ended = true,
                    Some(t) if KNOWN_EVENT_TYPES.contains(&t) => {}
                    Some(t) => out.push(Warning {
                        line: event.line,
                        message: format!("codex run {n}: unknown event type `{t}` (acplb should ignore it)"),
                    }),
                    None => out.push(Warning {
                        line: event.line,
                        message: format!("codex run {n}: stdout line has no `type`"),
                    }),
                },
                Err(e) => out.push(Warning {
                    line: event.line,
                    message: format!("codex run {n}: stdout line is not JSON ({e})"),
                }),
            }
        }
        if !ended && !matches!(run.end, End::Cancelled) {
            let how = match run.end {
                End::Exit(code) => format!("exit code {code}"),
                End::Signal(signal) => format!("signal {signal}"),
                End::Cancelled => String::new(),
            };
            out.push(Warning {
                line: last_line,
                message: format!(
                    "codex run {n} ends mid-stream ({how}) without turn.completed or turn.failed"
                ),
            });
        }
    }
    out
}
