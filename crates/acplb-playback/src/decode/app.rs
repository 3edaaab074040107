//! `decode` of an app-server stream: an acplb transcript of an app-server turn
//! (`{"t_ms":…,"recv":MSG}`), a capture of both directions as `{"dir":"in"|"out","msg":MSG}`, or
//! the server's raw output lines. What the server sent goes through acplb-codex's
//! `AppDecoder`; what acplb sent is skipped.

use std::io::{BufRead, Write};
use std::path::Path;

use acplb_codex::appserver::decode::{AppDecoder, DecoderOptions};
use agent_client_protocol::v1::schema::ToolCallStatus;
use serde_json::{Value, json};

use super::write::{Out, write_batch};
use super::{DecodeOptions, DecodeReport, Format};
use crate::error::PlaybackError;

/// The bound acplb puts on a tool call's output by default.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Whether the input's first bytes look like an app-server stream.
pub(super) fn detect(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    if first.starts_with(r#"{"start":{"transport":"app-server""#) || first.starts_with(r#"{"dir":"#) {
        return true;
    }
    match serde_json::from_str::<Value>(first) {
        Ok(v) => {
            v.pointer("/start/transport").and_then(Value::as_str) == Some("app-server")
                || (v.get("dir").is_some() && v.get("msg").is_some())
                || (v.get("type").is_none()
                    && (v.get("method").is_some() || v.get("result").is_some() || v.get("error").is_some()))
        }
        Err(_) => false,
    }
}

/// Decodes an app-server stream into `out`.
pub(super) fn decode<R: BufRead, W: Write>(
    path: &Path,
    input: R,
    out: &mut W,
    mut opts: DecodeOptions,
) -> Result<DecodeReport, PlaybackError> {
    let mut report = DecodeReport {
        format: Some(Format::AppServer),
        ..DecodeReport::default()
    };
    let mut decoder: Option<AppDecoder> = None;
    let mut updates = Vec::new();
    let mut batch: Vec<Out> = Vec::new();
    let mut turn_ended = false;
    let warn = |report: &mut DecodeReport, line: usize, message: String, error: bool| {
        report
            .warnings
            .push(format!("{}:{line}: {message}", path.display()));
        report.failed |= error;
    };
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(PlaybackError::io(path))?;
        report.lines = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                warn(&mut report, i + 1, format!("not JSON (truncated?): {e}"), true);
                continue;
            }
        };
        if let Some(start) = value.get("start") {
            if opts.cwd.is_none() {
                opts.cwd = start.get("cwd").and_then(Value::as_str).map(Into::into);
            }
            continue;
        }
        if value.get("cancelled").is_some() {
            batch.push(Out::Line(r#"{"cancelled":true}"#.to_owned()));
            continue;
        }
        let Some(msg) = received(&value) else { continue };
        let decoder = decoder.get_or_insert_with(|| new_decoder(&opts));
        match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
            (Some(method), None) => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                let signal = decoder.notification(method, &params, &mut updates);
                batch.extend(updates.drain(..).map(Out::Update));
                if let Some(signal) = signal {
                    if method == "turn/completed" {
                        turn_ended = true;
                    }
                    batch.push(Out::Line(json!({ "signal": format!("{signal:?}") }).to_string()));
                }
            }
            (Some(method), Some(id)) => {
                batch.push(Out::Line(
                    json!({ "server_request": { "id": id, "method": method } }).to_string(),
                ));
            }
            (None, _) if msg.get("gone").is_some() => {
                batch.push(Out::Line(json!({ "gone": msg["gone"] }).to_string()));
            }
            // Results of acplb's requests change nothing on screen.
            (None, _) => {}
        }
        if batch.len() >= 512 {
            write_batch(std::mem::take(&mut batch), out).map_err(PlaybackError::io(path))?;
        }
    }
    let lines = report.lines;
    if let Some(decoder) = decoder.as_mut() {
        decoder.close_open_tool_calls_because(
            ToolCallStatus::Failed,
            Some("The stream ended before this finished."),
            &mut updates,
        );
        batch.extend(updates.drain(..).map(Out::Update));
        for (what, n) in decoder.unknown_counts() {
            warn(
                &mut report,
                lines,
                format!("unknown app-server message `{what}` ({n} times; ignored, as acplb does)"),
                false,
            );
        }
    }
    if !turn_ended {
        warn(
            &mut report,
            lines,
            "the stream ends without turn/completed (the server stopped mid-turn?)".to_owned(),
            false,
        );
    }
    write_batch(batch, out).map_err(PlaybackError::io(path))?;
    out.flush().map_err(PlaybackError::io(path))?;
    Ok(report)
}

/// What the server sent, in any of the three forms; `None` for what acplb sent.
fn received(value: &Value) -> Option<&Value> {
    if let Some(msg) = value.get("recv") {
        return Some(msg);
    }
    if value.get("sent").is_some() || value.get("stderr").is_some() || value.get("exit").is_some() {
        return None;
    }
    match (value.get("dir").and_then(Value::as_str), value.get("msg")) {
        (Some("in"), Some(msg)) => Some(msg),
        (Some(_), _) => None,
        (None, _) => Some(value),
    }
}

fn new_decoder(opts: &DecodeOptions) -> AppDecoder {
    let cwd = opts
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    AppDecoder::new(DecoderOptions {
        cwd,
        notices: opts.notices,
        max_output_bytes: MAX_OUTPUT_BYTES,
        id_prefix: "t1-".to_owned(),
        terminal: false,
        compaction: false,
        plan_updates: false,
        air: None,
    })
}
