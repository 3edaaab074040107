//! The scenario file as serde reads it (`ScenarioToml`), and its validation into a [`Scenario`].

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::{
    Action, After, Answer, AppServerRun, AppTurn, End, EventKind, ProviderEvent, ProviderRun, Reply,
    Scenario, Source, Step, Transport, VERSION, Workspace,
};
use crate::error::{PlaybackError, line_of};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioToml {
    version: Spanned<u32>,
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    acplb: AcplbToml,
    workspace: Option<Spanned<WorkspaceToml>>,
    #[serde(default)]
    client: Vec<Spanned<StepToml>>,
    #[serde(default)]
    answers: Vec<Spanned<AnswerToml>>,
    #[serde(default)]
    codex: Vec<Spanned<RunToml>>,
    #[serde(default)]
    app_server: Vec<Spanned<AppServerToml>>,
    #[serde(default)]
    expect: Option<Spanned<ExpectToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AppServerToml {
    #[serde(default)]
    argv: Vec<String>,
    end: EndToml,
    #[serde(default)]
    events: Vec<Spanned<EventToml>>,
    #[serde(default)]
    turn: Vec<Spanned<AppTurnToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AppTurnToml {
    session: String,
    turn: u64,
    #[serde(default)]
    events: Vec<Spanned<EventToml>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AcplbToml {
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    codex_model: Option<String>,
    #[serde(default)]
    transport: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkspaceToml {
    #[serde(default)]
    git: bool,
    #[serde(default)]
    files: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepToml {
    after: Option<AfterToml>,
    send: Option<Spanned<String>>,
    close: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AfterToml {
    response: Option<toml::Value>,
    tool_call: Option<String>,
    messages: Option<usize>,
    request: Option<String>,
    count: Option<usize>,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerToml {
    method: String,
    result: Option<String>,
    never: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunToml {
    session: String,
    turn: u64,
    end: EndToml,
    #[serde(default)]
    events: Vec<Spanned<EventToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EndToml {
    code: Option<i32>,
    signal: Option<i32>,
    cancelled: Option<bool>,
    stopped: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EventToml {
    t: u64,
    out: Option<String>,
    err: Option<String>,
    write: Option<String>,
    text: Option<String>,
    delete: Option<String>,
    sent: Option<String>,
    recv: Option<String>,
}

/// Where an event sits, which decides the kinds it may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A `[[codex]]` run: `out`, `err`, `write`, `delete`.
    Exec,
    /// An `[[app_server]]` process: `sent`, `recv`, `err`.
    Server,
    /// An `[[app_server.turn]]`: `sent`, `recv`, `write`, `delete`.
    Turn,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectToml {
    #[serde(default)]
    output: Vec<String>,
}

/// Validation context: the text (for line numbers) and the file (for messages).
struct Ctx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Ctx<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        line_of(self.text, span.start)
    }

    fn invalid(&self, span: &Range<usize>, message: impl Into<String>) -> PlaybackError {
        PlaybackError::Invalid {
            path: self.path.to_path_buf(),
            line: self.line(span),
            message: message.into(),
        }
    }
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Scenario, PlaybackError> {
    let raw: ScenarioToml = toml::from_str(text).map_err(|e| PlaybackError::Toml {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_owned(),
    })?;
    let cx = Ctx { text, path };
    if *raw.version.get_ref() != VERSION {
        return Err(cx.invalid(
            &raw.version.span(),
            format!(
                "unsupported scenario version {} (this playback reads version {VERSION})",
                raw.version.get_ref()
            ),
        ));
    }
    let client = raw
        .client
        .into_iter()
        .map(|s| step(&cx, s))
        .collect::<Result<_, _>>()?;
    let answers = raw
        .answers
        .into_iter()
        .map(|a| answer(&cx, a))
        .collect::<Result<_, _>>()?;
    let transport = match &raw.acplb.transport {
        None => Transport::Exec,
        Some(t) => t
            .get_ref()
            .parse()
            .map_err(|e: String| cx.invalid(&t.span(), e))?,
    };
    if transport == Transport::Exec
        && let Some(first) = raw.app_server.first()
    {
        return Err(cx.invalid(
            &first.span(),
            "`[[app_server]]` needs `transport = 'app-server'` in `[acplb]`",
        ));
    }
    if transport == Transport::AppServer
        && let Some(first) = raw.codex.first()
    {
        return Err(cx.invalid(
            &first.span(),
            "`[[codex]]` runs are `codex exec` runs; this scenario's transport is `app-server`",
        ));
    }
    let codex = raw
        .codex
        .into_iter()
        .map(|r| run(&cx, r))
        .collect::<Result<_, _>>()?;
    let app_servers = raw
        .app_server
        .into_iter()
        .map(|r| app_server(&cx, r))
        .collect::<Result<_, _>>()?;
    let expect_line = raw.expect.as_ref().map(|e| cx.line(&e.span()));
    let workspace = match raw.workspace {
        Some(spanned) => {
            let span = spanned.span();
            let ws = spanned.into_inner();
            if let Some(bad) = ws.files.keys().find(|p| !is_relative_inside(p)) {
                return Err(cx.invalid(
                    &span,
                    format!("workspace file `{bad}` must be a relative path inside the workspace"),
                ));
            }
            Workspace {
                git: ws.git,
                files: ws.files,
            }
        }
        None => Workspace::default(),
    };
    Ok(Scenario {
        name: raw.name,
        description: raw.description,
        acplb_args: raw.acplb.args,
        transport,
        codex_model: raw.acplb.codex_model,
        workspace,
        client,
        answers,
        codex,
        app_servers,
        expect: raw.expect.map(|e| e.into_inner().output).unwrap_or_default(),
        source: Some(Source {
            path: path.to_path_buf(),
            expect_line,
        }),
    })
}

fn step(cx: &Ctx<'_>, spanned: Spanned<StepToml>) -> Result<Step, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let after = raw.after.map(|a| after(cx, &span, a)).transpose()?;
    let action = match (raw.send, raw.close) {
        (Some(send), None | Some(false)) => {
            let value: Value = serde_json::from_str(send.get_ref())
                .map_err(|e| cx.invalid(&send.span(), format!("`send` is not a JSON message: {e}")))?;
            if !value.is_object() || value.get("jsonrpc").is_none() {
                return Err(cx.invalid(&send.span(), "`send` is not a JSON-RPC message object"));
            }
            Action::Send(send.into_inner())
        }
        (None, Some(true)) => Action::Close,
        _ => {
            return Err(cx.invalid(
                &span,
                "a client step needs exactly one of `send = '<json>'` and `close = true`",
            ));
        }
    };
    Ok(Step {
        after,
        action,
        line: cx.line(&span),
    })
}

fn after(cx: &Ctx<'_>, span: &Range<usize>, raw: AfterToml) -> Result<After, PlaybackError> {
    if raw.count.is_some() && raw.request.is_none() {
        return Err(cx.invalid(span, "`after.count` goes with `after.request`"));
    }
    match (raw.response, raw.tool_call, raw.messages, raw.request, raw.text) {
        (Some(id), None, None, None, None) => {
            let id = serde_json::to_value(&id)
                .ok()
                .filter(|v| v.is_number() || v.is_string())
                .ok_or_else(|| {
                    cx.invalid(span, "`after.response` must be a request id (number or string)")
                })?;
            Ok(After::Response(id))
        }
        (None, Some(title), None, None, None) => Ok(After::ToolCall(title)),
        (None, None, Some(n), None, None) => Ok(After::Messages(n)),
        (None, None, None, Some(method), None) => Ok(After::Request {
            method,
            count: raw.count.unwrap_or(1),
        }),
        (None, None, None, None, Some(text)) => Ok(After::Text(text)),
        _ => Err(cx.invalid(
            span,
            "`after` needs exactly one of `response`, `tool_call`, `messages`, `request` (with an optional `count`) and `text`",
        )),
    }
}

fn answer(cx: &Ctx<'_>, spanned: Spanned<AnswerToml>) -> Result<Answer, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let reply = match (raw.result, raw.never) {
        (Some(result), None | Some(false)) => {
            if let Err(e) = serde_json::from_str::<Value>(&result) {
                return Err(cx.invalid(&span, format!("answer `result` is not JSON: {e}")));
            }
            Reply::Result(result)
        }
        (None, Some(true)) => Reply::Never,
        _ => {
            return Err(cx.invalid(
                &span,
                "an answer needs exactly one of `result = '<json>'` and `never = true`",
            ));
        }
    };
    Ok(Answer {
        method: raw.method,
        reply,
        line: cx.line(&span),
    })
}

fn run(cx: &Ctx<'_>, spanned: Spanned<RunToml>) -> Result<ProviderRun, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let end = end(cx, &span, &raw.end, "cancelled")?;
    let events = raw
        .events
        .into_iter()
        .map(|e| event(cx, e, Place::Exec))
        .collect::<Result<_, _>>()?;
    Ok(ProviderRun {
        session: raw.session,
        turn: raw.turn,
        events,
        end,
        line: cx.line(&span),
    })
}

/// `end = { code | signal | <stopped> }`; `stopped` names the third kind (`cancelled` for a
/// `codex exec` run, `stopped` for an app-server process).
fn end(cx: &Ctx<'_>, span: &Range<usize>, raw: &EndToml, stopped: &str) -> Result<End, PlaybackError> {
    let third = if stopped == "stopped" {
        raw.stopped.filter(|_| raw.cancelled.is_none())
    } else {
        raw.cancelled.filter(|_| raw.stopped.is_none())
    };
    match (raw.code, raw.signal, third) {
        (Some(code), None, None | Some(false)) => Ok(End::Exit(code)),
        (None, Some(signal), None | Some(false)) => Ok(End::Signal(signal)),
        (None, None, Some(true)) => Ok(End::Cancelled),
        _ => Err(cx.invalid(
            span,
            format!("`end` needs exactly one of `code = N`, `signal = N` and `{stopped} = true`"),
        )),
    }
}

fn app_server(cx: &Ctx<'_>, spanned: Spanned<AppServerToml>) -> Result<AppServerRun, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let end = end(cx, &span, &raw.end, "stopped")?;
    let events = raw
        .events
        .into_iter()
        .map(|e| event(cx, e, Place::Server))
        .collect::<Result<_, _>>()?;
    let turns = raw
        .turn
        .into_iter()
        .map(|t| {
            let span = t.span();
            let t = t.into_inner();
            Ok(AppTurn {
                session: t.session,
                turn: t.turn,
                events: t
                    .events
                    .into_iter()
                    .map(|e| event(cx, e, Place::Turn))
                    .collect::<Result<_, _>>()?,
                line: cx.line(&span),
            })
        })
        .collect::<Result<_, PlaybackError>>()?;
    Ok(AppServerRun {
        argv: raw.argv,
        events,
        end,
        turns,
        line: cx.line(&span),
    })
}

fn event(cx: &Ctx<'_>, spanned: Spanned<EventToml>, place: Place) -> Result<ProviderEvent, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let kind = match (
        raw.out, raw.err, raw.write, raw.text, raw.delete, raw.sent, raw.recv,
    ) {
        (Some(line), None, None, None, None, None, None) if place == Place::Exec => EventKind::Stdout(line),
        (None, Some(line), None, None, None, None, None) if place != Place::Turn => EventKind::Stderr(line),
        (None, None, Some(path), Some(text), None, None, None) if place != Place::Server => {
            EventKind::Write { path, text }
        }
        (None, None, None, None, Some(path), None, None) if place != Place::Server => {
            EventKind::Delete { path }
        }
        (None, None, None, None, None, Some(line), None) if place != Place::Exec => {
            EventKind::Sent(json_message(cx, &span, line)?)
        }
        (None, None, None, None, None, None, Some(line)) if place != Place::Exec => {
            EventKind::Recv(json_message(cx, &span, line)?)
        }
        _ => {
            let kinds = match place {
                Place::Exec => "`out`, `err`, `write` (with `text`) and `delete`",
                Place::Server => "`sent`, `recv` and `err`",
                Place::Turn => "`sent`, `recv`, `write` (with `text`) and `delete`",
            };
            return Err(cx.invalid(
                &span,
                format!("an event here needs `t` and exactly one of {kinds}"),
            ));
        }
    };
    if let EventKind::Write { path, .. } | EventKind::Delete { path } = &kind
        && !is_relative_inside(path)
    {
        return Err(cx.invalid(
            &span,
            format!("`{path}` must be a relative path inside the workspace"),
        ));
    }
    Ok(ProviderEvent {
        t_ms: raw.t,
        kind,
        line: cx.line(&span),
    })
}

/// A `sent`/`recv` line, which must be a JSON object.
fn json_message(cx: &Ctx<'_>, span: &Range<usize>, line: String) -> Result<String, PlaybackError> {
    match serde_json::from_str::<Value>(&line) {
        Ok(v) if v.is_object() => Ok(line),
        Ok(_) => Err(cx.invalid(span, "a `sent`/`recv` message must be a JSON object")),
        Err(e) => Err(cx.invalid(span, format!("a `sent`/`recv` message is not JSON: {e}"))),
    }
}

/// Whether `path` is relative and never climbs out (`..`).
pub(crate) fn is_relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}
