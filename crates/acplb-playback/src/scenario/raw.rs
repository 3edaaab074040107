//! The scenario file as serde reads it (`ScenarioToml`), and its validation into a [`Scenario`].

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::{
    Action, After, Answer, End, EventKind, ProviderEvent, ProviderRun, Scenario, Source, Step, VERSION,
    Workspace,
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
    expect: Option<Spanned<ExpectToml>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AcplbToml {
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    codex_model: Option<String>,
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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerToml {
    method: String,
    result: String,
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
    let codex = raw
        .codex
        .into_iter()
        .map(|r| run(&cx, r))
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
        codex_model: raw.acplb.codex_model,
        workspace,
        client,
        answers,
        codex,
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
    match (raw.response, raw.tool_call, raw.messages) {
        (Some(id), None, None) => {
            let id = serde_json::to_value(&id)
                .ok()
                .filter(|v| v.is_number() || v.is_string())
                .ok_or_else(|| {
                    cx.invalid(span, "`after.response` must be a request id (number or string)")
                })?;
            Ok(After::Response(id))
        }
        (None, Some(title), None) => Ok(After::ToolCall(title)),
        (None, None, Some(n)) => Ok(After::Messages(n)),
        _ => Err(cx.invalid(
            span,
            "`after` needs exactly one of `response`, `tool_call` and `messages`",
        )),
    }
}

fn answer(cx: &Ctx<'_>, spanned: Spanned<AnswerToml>) -> Result<Answer, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    if let Err(e) = serde_json::from_str::<Value>(&raw.result) {
        return Err(cx.invalid(&span, format!("answer `result` is not JSON: {e}")));
    }
    Ok(Answer {
        method: raw.method,
        result: raw.result,
        line: cx.line(&span),
    })
}

fn run(cx: &Ctx<'_>, spanned: Spanned<RunToml>) -> Result<ProviderRun, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let end = match (raw.end.code, raw.end.signal, raw.end.cancelled) {
        (Some(code), None, None | Some(false)) => End::Exit(code),
        (None, Some(signal), None | Some(false)) => End::Signal(signal),
        (None, None, Some(true)) => End::Cancelled,
        _ => {
            return Err(cx.invalid(
                &span,
                "`end` needs exactly one of `code = N`, `signal = N` and `cancelled = true`",
            ));
        }
    };
    let events = raw
        .events
        .into_iter()
        .map(|e| event(cx, e))
        .collect::<Result<_, _>>()?;
    Ok(ProviderRun {
        session: raw.session,
        turn: raw.turn,
        events,
        end,
        line: cx.line(&span),
    })
}

fn event(cx: &Ctx<'_>, spanned: Spanned<EventToml>) -> Result<ProviderEvent, PlaybackError> {
    let span = spanned.span();
    let raw = spanned.into_inner();
    let kind = match (raw.out, raw.err, raw.write, raw.text, raw.delete) {
        (Some(line), None, None, None, None) => EventKind::Stdout(line),
        (None, Some(line), None, None, None) => EventKind::Stderr(line),
        (None, None, Some(path), Some(text), None) => EventKind::Write { path, text },
        (None, None, None, None, Some(path)) => EventKind::Delete { path },
        _ => {
            return Err(cx.invalid(
                &span,
                "an event needs `t` and exactly one of `out`, `err`, `write` (with `text`) and `delete`",
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

/// Whether `path` is relative and never climbs out (`..`).
pub(crate) fn is_relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}
