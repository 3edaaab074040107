//! The recorded Codex side of a scenario file: `[[codex]]` runs of `codex exec` and
//! `[[app_server]]` processes with their turns, as serde reads them and validated into
//! [`ProviderRun`]s and [`AppServerRun`]s.

use std::ops::Range;

use serde::Deserialize;
use serde_json::Value;
use toml::Spanned;

use super::super::{AppServerRun, AppTurn, End, EventKind, ProviderEvent, ProviderRun};
use super::{Ctx, is_relative_inside};
use crate::error::PlaybackError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AppServerToml {
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
pub(super) struct AppTurnToml {
    session: String,
    turn: u64,
    #[serde(default)]
    events: Vec<Spanned<EventToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunToml {
    session: String,
    turn: u64,
    end: EndToml,
    #[serde(default)]
    events: Vec<Spanned<EventToml>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EndToml {
    code: Option<i32>,
    signal: Option<i32>,
    cancelled: Option<bool>,
    stopped: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EventToml {
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
pub(super) enum Place {
    /// A `[[codex]]` run: `out`, `err`, `write`, `delete`.
    Exec,
    /// An `[[app_server]]` process: `sent`, `recv`, `err`.
    Server,
    /// An `[[app_server.turn]]`: `sent`, `recv`, `write`, `delete`.
    Turn,
}

pub(super) fn run(cx: &Ctx<'_>, spanned: Spanned<RunToml>) -> Result<ProviderRun, PlaybackError> {
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
pub(super) fn end(
    cx: &Ctx<'_>,
    span: &Range<usize>,
    raw: &EndToml,
    stopped: &str,
) -> Result<End, PlaybackError> {
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

pub(super) fn app_server(
    cx: &Ctx<'_>,
    spanned: Spanned<AppServerToml>,
) -> Result<AppServerRun, PlaybackError> {
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

pub(super) fn event(
    cx: &Ctx<'_>,
    spanned: Spanned<EventToml>,
    place: Place,
) -> Result<ProviderEvent, PlaybackError> {
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
pub(super) fn json_message(cx: &Ctx<'_>, span: &Range<usize>, line: String) -> Result<String, PlaybackError> {
    match serde_json::from_str::<Value>(&line) {
        Ok(v) if v.is_object() => Ok(line),
        Ok(_) => Err(cx.invalid(span, "a `sent`/`recv` message must be a JSON object")),
        Err(e) => Err(cx.invalid(span, format!("a `sent`/`recv` message is not JSON: {e}"))),
    }
}
