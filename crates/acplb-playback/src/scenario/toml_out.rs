//! Writing a [`Scenario`] as TOML laid out for people: one message or event per line, JSON kept
//! verbatim in literal strings, so a diff of two recordings reads like a diff of two transcripts.

use std::fmt::Write as _;

use acplb_core::toml_text::{basic, key};
use serde_json::Value;

use super::{Action, After, End, EventKind, ProviderEvent, Reply, Scenario, Transport, VERSION};

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
    if scenario.transport != Transport::Exec {
        let _ = writeln!(out, "transport = {}", quote(scenario.transport.as_str()));
    }
    write_workspace(scenario, &mut out);
    write_client(scenario, &mut out);
    write_answers(scenario, &mut out);
    write_codex(scenario, &mut out);
    write_app_servers(scenario, &mut out);
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
        if let Some(after) = &step.after {
            let _ = writeln!(out, "after = {{ {} }}", after_body(after));
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

/// The inside of an `after = { … }` table (a pause of a live recording is not kept).
fn after_body(after: &After) -> String {
    match after {
        After::Response(id) => format!("response = {}", json_scalar(id)),
        After::ToolCall(title) => format!("tool_call = {}", quote(title)),
        After::Messages(n) => format!("messages = {n}"),
        After::Request { method, count } => format!("request = {}, count = {count}", quote(method)),
        After::Text(text) => format!("text = {}", quote(text)),
        After::Paused(inner, _) => after_body(inner),
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
        match &answer.reply {
            Reply::Result(result) => {
                let _ = writeln!(out, "result = {}\n", quote(result));
            }
            // A pick is resolved when the live client answers; a file never holds one.
            Reply::Never | Reply::Pick(_) => out.push_str("never = true\n\n"),
        }
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
        write_events(&run.events, out);
    }
}

fn write_app_servers(scenario: &Scenario, out: &mut String) {
    if scenario.app_servers.is_empty() {
        return;
    }
    out.push_str(
        "# The provider: every `codex app-server` process acplb started, in order, with its `initialize`\n\
         # exchange and stderr, then the turns it served: the JSON-RPC of each session's thread, both ways\n\
         # (`sent`: acplb to Codex, `recv`: Codex to acplb); `t` is milliseconds since the process or turn started.\n",
    );
    for server in &scenario.app_servers {
        out.push_str("[[app_server]]\n");
        let _ = writeln!(out, "argv = {}", string_array(&server.argv));
        let end = match server.end {
            End::Exit(code) => format!("{{ code = {code} }}"),
            End::Signal(signal) => format!("{{ signal = {signal} }}"),
            End::Cancelled => "{ stopped = true }".to_owned(),
        };
        let _ = writeln!(out, "end = {end}");
        write_events(&server.events, out);
        for turn in &server.turns {
            out.push_str("[[app_server.turn]]\n");
            let _ = writeln!(out, "session = {}", quote(&turn.session));
            let _ = writeln!(out, "turn = {}", turn.turn);
            write_events(&turn.events, out);
        }
    }
}

fn write_events(events: &[ProviderEvent], out: &mut String) {
    out.push_str("events = [\n");
    for event in events {
        let t = event.t_ms;
        let body = match &event.kind {
            EventKind::Stdout(line) => format!("out = {}", quote(line)),
            EventKind::Stderr(line) => format!("err = {}", quote(line)),
            EventKind::Write { path, text } => {
                format!("write = {}, text = {}", quote(path), quote(text))
            }
            EventKind::Delete { path } => format!("delete = {}", quote(path)),
            EventKind::Sent(line) => format!("sent = {}", quote(line)),
            EventKind::Recv(line) => format!("recv = {}", quote(line)),
        };
        let _ = writeln!(out, "  {{ t = {t}, {body} }},");
    }
    out.push_str("]\n\n");
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
