//! The scenario file as serde reads it (`ScenarioToml`), and its validation into a [`Scenario`].

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::{Action, After, Answer, Reply, Scenario, Source, Step, Transport, VERSION, Workspace};
use crate::error::{PlaybackError, line_of};

mod codex;

use codex::{AppServerToml, RunToml, app_server, run};

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

/// Whether `path` is relative and never climbs out (`..`).
pub(crate) fn is_relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}
