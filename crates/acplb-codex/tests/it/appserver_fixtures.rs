//! Data-driven snapshot tests of the app-server decoder and the approval mapping: one snapshot
//! per `tests/fixtures/appserver/*.jsonl` (recorded by `examples/record_appserver_fixtures.rs`).
//!
//! [`check`] replays what Codex sent (`"dir": "in"`): notifications through an `AppDecoder`
//! (a new one, with a new id prefix, at each `turn/start` the client sent), approval requests
//! through `Ask::from_request` (the ask is rendered whole, and the answer the recording sent
//! must be one the ask can give), `item/tool/requestUserInput` through `answer_user_input`.
//! Then it closes what is still open as a crashed session would, and renders every update and
//! signal as one JSON line. `INSTA_UPDATE=always cargo test -p acplb-codex` blesses changes.

use std::fs;
use std::path::{Path, PathBuf};

use acplb_codex::appserver::approval::{Ask, answer_user_input};
use acplb_codex::appserver::decode::{AppDecoder, DecoderOptions};
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use serde_json::{Value, json};

use crate::snapshot_all::{Fixtures, check_all};

/// The workspace the fixtures were recorded in (rewritten by the recorder).
const CWD: &str = "/workspace";

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/appserver")
}

fn decoder(turn: usize) -> AppDecoder {
    AppDecoder::new(DecoderOptions {
        id_prefix: format!("t{turn}/"),
        ..DecoderOptions::new(CWD)
    })
}

/// Replays one fixture and renders the result, one JSON line per update, signal or ask.
fn check(jsonl: &Path) -> String {
    let lines: Vec<Value> = fs::read_to_string(jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut turns = 0;
    let mut decoder = decoder(1);
    let mut rendered = Vec::new();
    let mut out = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let msg = &line["msg"];
        let method = msg["method"].as_str();
        if line["dir"] == "out" {
            if method == Some("turn/start") {
                turns += 1;
                if turns > 1 {
                    decoder = decoder_for(turns, &mut decoder, &mut rendered);
                }
            }
            continue;
        }
        let Some(method) = method else { continue };
        let params = &msg["params"];
        if let Some(id) = msg.get("id") {
            let sent = lines[index..]
                .iter()
                .find(|l| l["dir"] == "out" && l["msg"]["id"] == *id && l["msg"].get("method").is_none())
                .map(|l| l["msg"]["result"].clone());
            rendered.push(request(method, params, &decoder, sent.as_ref(), &mut out));
            render(&mut rendered, &mut out);
            continue;
        }
        if let Some(signal) = decoder.notification(method, params, &mut out) {
            render(&mut rendered, &mut out);
            rendered.push(serde_json::to_string(&signal).unwrap());
        } else {
            render(&mut rendered, &mut out);
        }
    }
    finish(&mut decoder, &mut rendered);
    rendered.join("\n") + "\n"
}

/// Closes the turn's decoder and starts the next one.
fn decoder_for(turn: usize, old: &mut AppDecoder, rendered: &mut Vec<String>) -> AppDecoder {
    finish(old, rendered);
    rendered.push(format!("--- turn {turn} ---"));
    decoder(turn)
}

fn finish(decoder: &mut AppDecoder, rendered: &mut Vec<String>) {
    let mut out = Vec::new();
    decoder.close_open_tool_calls_because(ToolCallStatus::Failed, Some("end of fixture"), &mut out);
    if !out.is_empty() {
        rendered.push("--- closed at the end ---".into());
        render(rendered, &mut out);
    }
    if !decoder.unknown_counts().is_empty() {
        rendered.push(format!("unknown: {:?}", decoder.unknown_counts()));
    }
}

/// A server request: the ask (with every answer it can give) and which one was recorded.
fn request(
    method: &str,
    params: &Value,
    decoder: &AppDecoder,
    sent: Option<&Value>,
    out: &mut Vec<SessionUpdate>,
) -> String {
    if method == "item/tool/requestUserInput" {
        let result = answer_user_input(params, out);
        return json!({"user_input": {"result": result}}).to_string();
    }
    let Some(ask) = Ask::from_request(method, params, decoder) else {
        return json!({"not_an_approval": method}).to_string();
    };
    let answers: serde_json::Map<String, Value> = ask
        .options
        .iter()
        .map(|o| (o.option_id.to_string(), ask.answer(&o.option_id.0)))
        .collect();
    let for_session: Vec<String> = ask
        .options
        .iter()
        .filter(|o| ask.is_for_session(&o.option_id.0))
        .map(|o| o.option_id.to_string())
        .collect();
    let picked = sent.map(|sent| {
        let picked = answers
            .iter()
            .find(|(_, answer)| *answer == sent)
            .map(|(id, _)| id.clone())
            .or_else(|| (ask.cancelled() == *sent).then(|| "<cancelled>".to_owned()));
        picked.unwrap_or_else(|| panic!("the recorded answer {sent} is none the ask can give: {answers:?}"))
    });
    json!({"ask": {
        "method": method,
        "toolCall": ask.tool_call,
        "options": ask.options,
        "answers": answers,
        "forSession": for_session,
        "rejected": ask.rejected(),
        "cancelled": ask.cancelled(),
        "recorded": picked,
    }})
    .to_string()
}

fn render(rendered: &mut Vec<String>, out: &mut Vec<SessionUpdate>) {
    rendered.extend(out.drain(..).map(|u| serde_json::to_string(&u).unwrap()));
}

#[test]
fn fixtures() {
    let fixtures = Fixtures {
        dir: fixtures_dir(),
        label: "tests/fixtures/appserver",
        snapshots: "../snapshots/appserver",
        at_least: 20,
        cwd: CWD,
        filters: &[(r"127\.0\.0\.1:[0-9]+", "127.0.0.1:[PORT]")],
    };
    check_all(&fixtures, check);
}
