//! Writing a [`Scenario`] as TOML laid out for people: one message or event per line, JSON kept
//! verbatim in literal strings, so a diff of two recordings reads like a diff of two transcripts.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Action, After, End, EventKind, Scenario, VERSION};

const HEADER: &str = "\
# A playback scenario: one ACP session through acplb, with Codex's side recorded.
# Format: dev-docs/scenarios.md. Replay: `playback run FILE`; compare: `playback check FILE`.
";

/// The whole file.
pub fn to_toml(scenario: &Scenario) -> String {
    let mut out = String::with_capacity(4096);
    out.push_str(HEADER);
    let _ = writeln!(out, "version = {VERSION}");
    let _ = writeln!(out, "name = {}", quote(&scenario.name));
    let _ = writeln!(out, "description = {}", quote(&scenario.description));
    out.push_str("\n[acplb]\n");
    let _ = writeln!(out, "args = {}", string_array(&scenario.acplb_args));
    if let Some(model) = &scenario.codex_model {
        let _ = writeln!(out, "codex_model = {}", quote(model));
    }
    write_workspace(scenario, &mut out);
    write_client(scenario, &mut out);
    write_answers(scenario, &mut out);
    write_codex(scenario, &mut out);
    out.push_str(&expect_section(&scenario.expect));
    out
}

/// The `[expect]` table alone (what `check --bless` replaces).
pub fn expect_section(lines: &[String]) -> String {
    let mut out = String::from(
        "\n# What `playback run` prints: acplb's messages, one line per Codex run, acplb's exit (normalized).\n[expect]\noutput = [\n",
    );
    for line in lines {
        let _ = writeln!(out, "  {},", quote(line));
    }
    out.push_str("]\n");
    out
}

fn write_workspace(scenario: &Scenario, out: &mut String) {
    let ws = &scenario.workspace;
    out.push_str("\n# The workspace acplb's session starts in (paths relative to it).\n[workspace]\n");
    let _ = writeln!(out, "git = {}", ws.git);
    if !ws.files.is_empty() {
        out.push_str("\n[workspace.files]\n");
        for (path, text) in &ws.files {
            let _ = writeln!(out, "{} = {}", key(path), quote_text(text));
        }
    }
}

fn write_client(scenario: &Scenario, out: &mut String) {
    out.push_str(
        "\n# The client: each step waits for `after` (if any), then sends a message or closes acplb's stdin.\n",
    );
    for step in &scenario.client {
        out.push_str("[[client]]\n");
        match &step.after {
            Some(After::Response(id)) => {
                let _ = writeln!(out, "after = {{ response = {} }}", json_scalar(id));
            }
            Some(After::ToolCall(title)) => {
                let _ = writeln!(out, "after = {{ tool_call = {} }}", quote(title));
            }
            Some(After::Messages(n)) => {
                let _ = writeln!(out, "after = {{ messages = {n} }}");
            }
            None => {}
        }
        match &step.action {
            Action::Send(message) => {
                let _ = writeln!(out, "send = {}", quote(message));
            }
            Action::Close => out.push_str("close = true\n"),
        }
        out.push('\n');
    }
}

fn write_answers(scenario: &Scenario, out: &mut String) {
    if scenario.answers.is_empty() {
        return;
    }
    out.push_str("# Answers to the agent's requests, used in order for each method.\n");
    for answer in &scenario.answers {
        out.push_str("[[answers]]\n");
        let _ = writeln!(out, "method = {}", quote(&answer.method));
        let _ = writeln!(out, "result = {}\n", quote(&answer.result));
    }
}

fn write_codex(scenario: &Scenario, out: &mut String) {
    out.push_str(
        "# The provider: every Codex process acplb started, in order; `t` is milliseconds since it started.\n",
    );
    for run in &scenario.codex {
        out.push_str("[[codex]]\n");
        let _ = writeln!(out, "session = {}", quote(&run.session));
        let _ = writeln!(out, "turn = {}", run.turn);
        let end = match run.end {
            End::Exit(code) => format!("{{ code = {code} }}"),
            End::Signal(signal) => format!("{{ signal = {signal} }}"),
            End::Cancelled => "{ cancelled = true }".to_owned(),
        };
        let _ = writeln!(out, "end = {end}");
        out.push_str("events = [\n");
        for event in &run.events {
            let t = event.t_ms;
            let body = match &event.kind {
                EventKind::Stdout(line) => format!("out = {}", quote(line)),
                EventKind::Stderr(line) => format!("err = {}", quote(line)),
                EventKind::Write { path, text } => {
                    format!("write = {}, text = {}", quote(path), quote(text))
                }
                EventKind::Delete { path } => format!("delete = {}", quote(path)),
            };
            let _ = writeln!(out, "  {{ t = {t}, {body} }},");
        }
        out.push_str("]\n\n");
    }
}

fn string_array(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

fn json_scalar(value: &Value) -> String {
    match value {
        Value::String(s) => quote(s),
        other => other.to_string(),
    }
}

/// A bare key when TOML allows one, else a quoted key.
fn key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { name.to_owned() } else { basic(name) }
}

/// A one-line TOML string: `'…'` when possible, `'''…'''` when it holds `'`, else `"…"`.
pub fn quote(s: &str) -> String {
    let plain = !s.chars().any(|c| c.is_control() && c != '\t');
    if plain && !s.contains('\'') {
        format!("'{s}'")
    } else if plain && !s.contains("'''") && !s.starts_with('\'') {
        // A multi-line literal string may hold one or two quotes, even at its end.
        format!("'''{s}'''")
    } else {
        basic(s)
    }
}

/// A file's text: a multi-line literal string when it reads well that way.
fn quote_text(s: &str) -> String {
    let plain = !s.chars().any(|c| c.is_control() && c != '\t' && c != '\n');
    if plain && s.contains('\n') && !s.contains("'''") && !s.starts_with('\'') && !s.ends_with('\'') {
        format!("'''\n{s}'''")
    } else {
        quote(s)
    }
}

/// A TOML basic string with escapes.
fn basic(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push('\t'),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
