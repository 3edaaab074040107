//! Turning captured traffic and transcripts into a [`Scenario`]: client steps with their wait
//! conditions, answers, provider runs with file changes, and the normalized expected output.

use std::path::Path;
use std::process::ExitStatus;

use serde_json::Value;

use super::transcript::{TranscriptRun, Transcripts};
use super::{app, effects};
use crate::normalize::Normalizer;
use crate::output::{self, Observed};
use crate::scenario::{
    Action, After, Answer, EventKind, ProviderEvent, ProviderRun, Reply, Scenario, Step, Transport,
    Workspace, thread_opened, thread_started,
};

/// One thing that crossed the proxy, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Captured {
    /// A line from the client to acplb.
    Client(String),
    /// A line from acplb to the client.
    Agent(String),
    /// The client closed its end (acplb's stdin).
    ClientClosed,
}

/// Everything a recording is made from.
#[derive(Debug)]
pub(crate) struct Recording<'a> {
    pub(crate) name: String,
    pub(crate) description: String,
    /// acplb's arguments (after the program).
    pub(crate) args: Vec<String>,
    pub(crate) captured: Vec<Captured>,
    pub(crate) exit: Option<ExitStatus>,
    pub(crate) transcripts: Transcripts,
    /// The transport acplb ran with.
    pub(crate) transport: Transport,
    pub(crate) playback: &'a Path,
}

/// Builds the scenario.
pub(crate) fn scenario(rec: &Recording<'_>) -> Scenario {
    let parsed: Vec<(Option<Value>, &Captured)> = rec
        .captured
        .iter()
        .map(|c| match c {
            Captured::Client(l) | Captured::Agent(l) => (serde_json::from_str(l).ok(), c),
            Captured::ClientClosed => (None, c),
        })
        .collect();
    let (cwds, sessions) = sessions(&parsed);
    let session_dirs: Vec<String> = sessions
        .iter()
        .map(|s| acplb_codex::session_dir_name(s))
        .collect();
    let runs = &rec.transcripts.runs;
    let exec_threads = runs.iter().flat_map(|r| {
        r.lines
            .iter()
            .filter_map(|(_, l, out)| out.then(|| thread_started(l)).flatten())
    });
    let app_threads = rec.transcripts.turns.iter().flat_map(|t| {
        t.events.iter().filter_map(|(_, kind)| match kind {
            EventKind::Recv(l) => thread_opened(l),
            _ => None,
        })
    });
    let threads: Vec<String> = exec_threads.chain(app_threads).fold(Vec::new(), |mut v, t| {
        if !v.contains(&t) {
            v.push(t);
        }
        v
    });
    let mut seen = Observed {
        cwds: cwds.clone(),
        sessions: sessions.clone(),
        threads: Vec::new(),
        playback: Some(rec.playback),
        home: std::env::var("HOME").ok(),
        codex: codex_program(&rec.args),
    };
    // Provider lines keep Codex's real thread ids; everything else gets placeholders.
    let provider_norm = output::normalizer(&seen);
    seen.threads = threads;
    let mut norm = output::normalizer(&seen);

    let agent: Vec<Value> = parsed
        .iter()
        .filter(|(_, c)| matches!(c, Captured::Agent(_)))
        .filter_map(|(v, _)| v.clone())
        .collect();
    let cwd = cwds.first().cloned().unwrap_or_default();
    let effects = effects::derive(&agent, runs, &rec.transcripts.turns, &cwd);
    let app_servers = app::servers(&rec.transcripts, &session_dirs, &effects, &provider_norm);
    let codex = runs
        .iter()
        .enumerate()
        .map(|(i, run)| provider_run(i, run, &session_dirs, &effects, &provider_norm))
        .collect();
    let (client, answers) = client_side(&parsed, &norm);

    let mut expect: Vec<String> = rec
        .captured
        .iter()
        .filter_map(|c| match c {
            Captured::Agent(l) => Some(norm.json_line(l)),
            _ => None,
        })
        .collect();
    for (i, run) in runs.iter().enumerate() {
        expect.push(output::codex_line(i + 1, &run.argv, run.stdin_bytes, &norm));
    }
    expect.extend(app::expect_lines(&app_servers, &mut norm));
    expect.push(output::exit_line(rec.exit));

    Scenario {
        name: rec.name.clone(),
        description: rec.description.clone(),
        acplb_args: acplb_args(&rec.args, &norm),
        transport: rec.transport,
        codex_model: recorded_codex_model(),
        workspace: Workspace {
            git: !cwd.is_empty() && Path::new(&cwd).join(".git").exists(),
            files: effects
                .initial
                .iter()
                .map(|(k, v)| (k.clone(), provider_norm.text(v)))
                .collect(),
        },
        client,
        answers,
        codex,
        app_servers,
        expect,
        source: None,
    }
}

/// Workspaces (from `session/new` params) and session ids (from its responses), in order.
fn sessions(parsed: &[(Option<Value>, &Captured)]) -> (Vec<String>, Vec<String>) {
    let mut new_ids: Vec<Value> = Vec::new();
    let (mut cwds, mut sessions) = (Vec::new(), Vec::new());
    for (value, captured) in parsed {
        let Some(v) = value else { continue };
        match captured {
            Captured::Client(_) if v["method"] == "session/new" => {
                new_ids.push(v["id"].clone());
                if let Some(cwd) = v.pointer("/params/cwd").and_then(Value::as_str)
                    && !cwds.iter().any(|c| c == cwd)
                {
                    cwds.push(cwd.to_owned());
                }
            }
            Captured::Agent(_) if v.get("method").is_none() && new_ids.contains(&v["id"]) => {
                if let Some(id) = v.pointer("/result/sessionId").and_then(Value::as_str) {
                    sessions.push(id.to_owned());
                }
            }
            _ => {}
        }
    }
    (cwds, sessions)
}

fn provider_run(
    index: usize,
    run: &TranscriptRun,
    session_dirs: &[String],
    effects: &effects::Effects,
    norm: &Normalizer,
) -> ProviderRun {
    let session = session_dirs
        .iter()
        .position(|d| *d == run.session_dir)
        .map_or_else(
            || format!("<session-{}>", run.session_dir),
            |i| format!("<session-{}>", i + 1),
        );
    let mut events = Vec::with_capacity(run.lines.len());
    for (l, (t, line, is_stdout)) in run.lines.iter().enumerate() {
        if let Some(made) = effects.before_line.get(&(index, l)) {
            for kind in made {
                let kind = match kind {
                    EventKind::Write { path, text } => EventKind::Write {
                        path: path.clone(),
                        text: norm.text(text),
                    },
                    other => other.clone(),
                };
                events.push(ProviderEvent {
                    t_ms: *t,
                    kind,
                    line: 0,
                });
            }
        }
        let text = norm.text(line);
        let kind = if *is_stdout {
            EventKind::Stdout(text)
        } else {
            EventKind::Stderr(text)
        };
        events.push(ProviderEvent {
            t_ms: *t,
            kind,
            line: 0,
        });
    }
    ProviderRun {
        session,
        turn: run.turn,
        events,
        end: run.end,
        line: 0,
    }
}

/// What the client had seen when it sent something.
#[derive(Debug, Default)]
struct SeenSoFar<'v> {
    last: Option<&'v Value>,
    count: usize,
    requests: std::collections::HashMap<String, usize>,
    text: String,
}

/// Client steps (each waiting for the last agent message before it) and answers (one per
/// request from acplb, in order; `never` for one the client left unanswered).
fn client_side(parsed: &[(Option<Value>, &Captured)], norm: &Normalizer) -> (Vec<Step>, Vec<Answer>) {
    let mut steps = Vec::new();
    let mut answers: Vec<Answer> = Vec::new();
    let mut agent_requests: Vec<(Value, usize)> = Vec::new();
    let mut seen = SeenSoFar::default();
    for (value, captured) in parsed {
        match captured {
            Captured::Agent(_) => {
                seen.count += 1;
                seen.last = value.as_ref();
                let Some(v) = value else { continue };
                if let (Some(method), Some(id)) = (v["method"].as_str(), v.get("id")) {
                    *seen.requests.entry(method.to_owned()).or_default() += 1;
                    agent_requests.push((id.clone(), answers.len()));
                    answers.push(Answer {
                        method: method.to_owned(),
                        reply: Reply::Never,
                        line: 0,
                    });
                }
                let update = &v["params"]["update"];
                if v["method"] == "session/update"
                    && update["sessionUpdate"] == "agent_message_chunk"
                    && let Some(text) = update["content"]["text"].as_str()
                {
                    seen.text.push_str(text);
                }
            }
            Captured::Client(line) => {
                let v = value.as_ref();
                let is_answer = v.is_some_and(|v| v.get("method").is_none() && v.get("id").is_some());
                if is_answer && let Some(v) = v {
                    let result = v.get("result").unwrap_or(&Value::Null).to_string();
                    let reply = Reply::Result(norm.text(&result));
                    match agent_requests.iter().find(|(id, _)| *id == v["id"]) {
                        Some((_, i)) => answers[*i].reply = reply,
                        None => answers.push(Answer {
                            method: "?".to_owned(),
                            reply,
                            line: 0,
                        }),
                    }
                    continue;
                }
                steps.push(Step {
                    after: after(&seen, norm),
                    action: Action::Send(norm.text(line)),
                    line: 0,
                });
            }
            Captured::ClientClosed => steps.push(Step {
                after: after(&seen, norm),
                action: Action::Close,
                line: 0,
            }),
        }
    }
    (steps, answers)
}

/// Agent text a wait condition quotes: enough to be specific, short enough to read.
const TEXT_TAIL: usize = 40;

/// The wait condition for a client message sent right after what `seen` holds.
fn after(seen: &SeenSoFar<'_>, norm: &Normalizer) -> Option<After> {
    let count = seen.count;
    if count == 0 {
        return None;
    }
    let Some(last) = seen.last else {
        return Some(After::Messages(count));
    };
    if last.get("method").is_none()
        && let Some(id) = last.get("id").filter(|id| id.is_number() || id.is_string())
    {
        return Some(After::Response(id.clone()));
    }
    if let (Some(method), Some(_)) = (last["method"].as_str(), last.get("id")) {
        return Some(After::Request {
            method: method.to_owned(),
            count: seen.requests.get(method).copied().unwrap_or(1),
        });
    }
    let update = &last["params"]["update"];
    if last["method"] == "session/update"
        && update["sessionUpdate"] == "tool_call"
        && let Some(title) = update["title"].as_str()
    {
        return Some(After::ToolCall(norm.text(title)));
    }
    if update["sessionUpdate"] == "agent_message_chunk" {
        let chars: Vec<char> = seen.text.chars().collect();
        let tail: String = chars[chars.len().saturating_sub(TEXT_TAIL)..].iter().collect();
        // Text that holds a run-specific path would not match in a replay.
        if !tail.trim().is_empty() && norm.text(&tail) == tail {
            return Some(After::Text(tail));
        }
    }
    Some(After::Messages(count))
}

/// The Codex program acplb ran: its `--codex`, else `$ACPLB_CODEX` (which it inherited).
fn codex_program(args: &[String]) -> Option<String> {
    let from_args = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--codex=")
            .map(str::to_owned)
            .or_else(|| (a == "--codex").then(|| args.get(i + 1).cloned()).flatten())
    });
    from_args.or_else(|| std::env::var("ACPLB_CODEX").ok().filter(|c| !c.is_empty()))
}

/// acplb's arguments minus what playback sets itself (`--codex`, `--transcript-dir`).
/// The model the recording Codex's configuration named (acplb inherits the recorder's
/// environment), kept only when it is not Codex's built-in default.
fn recorded_codex_model() -> Option<String> {
    acplb_codex::catalog(&[])
        .default_model
        .filter(|m| m != acplb_codex::BUILTIN_DEFAULT_MODEL)
}

fn acplb_args(args: &[String], norm: &Normalizer) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--codex" || arg == "--transcript-dir" {
            skip = true;
            continue;
        }
        if arg.starts_with("--codex=") || arg.starts_with("--transcript-dir=") {
            continue;
        }
        out.push(norm.text(arg));
    }
    out
}

#[cfg(test)]
mod tests;
