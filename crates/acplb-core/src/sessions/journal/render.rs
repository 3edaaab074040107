//! A history as readable text (`acplb sessions show`): each prompt, the agent's text and
//! thoughts joined as they streamed, tool calls with their kind, final status and the end of
//! their output, plans, and how each turn ended.

use std::collections::HashMap;
use std::fmt::Write as _;

use agent_client_protocol::v1::schema::{
    ContentBlock, PlanEntryStatus, SessionUpdate, ToolCallContent, ToolCallStatus,
};

use super::history::History;
use super::record::Record;

/// The most lines of one tool's output shown.
const OUTPUT_LINES: usize = 12;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    None,
    Agent,
    Thought,
}

/// `history` as text, ending with a newline.
pub fn render(history: &History) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "session {}", history.session_id);
    let _ = writeln!(out, "cwd     {}", history.cwd.display());
    let _ = writeln!(out, "started {}", history.started_at);
    let mut stream = Stream::None;
    let mut titles: HashMap<String, String> = HashMap::new();
    for record in &history.records {
        match record {
            Record::Prompt {
                turn,
                at,
                prompt,
                steered,
            } => {
                end_stream(&mut out, &mut stream);
                let how = if *steered { "steered into turn" } else { "turn" };
                let _ = writeln!(out, "\n── {how} {turn} · {at}");
                for block in prompt {
                    for line in block_text(block).lines() {
                        let _ = writeln!(out, "> {line}");
                    }
                }
            }
            Record::Update { u } => update(&mut out, &mut stream, &mut titles, u),
            Record::TurnEnd {
                turn, stop, error, ..
            } => {
                end_stream(&mut out, &mut stream);
                match error {
                    Some(e) => {
                        let _ = writeln!(out, "── turn {turn} ended: {stop} ({e})");
                    }
                    None => {
                        let _ = writeln!(out, "── turn {turn} ended: {stop}");
                    }
                }
            }
            Record::Mode { id } => {
                end_stream(&mut out, &mut stream);
                let _ = writeln!(out, "· mode: {id}");
            }
            Record::Gap { limit } => {
                end_stream(&mut out, &mut stream);
                let _ = writeln!(
                    out,
                    "· (the journal reached its limit of {limit} bytes; later updates were not kept)"
                );
            }
            Record::Open { .. }
            | Record::Reopened { .. }
            | Record::Thread { .. }
            | Record::Setting { .. } => {}
        }
    }
    end_stream(&mut out, &mut stream);
    for skipped in &history.skipped {
        let _ = writeln!(out, "! skipped {skipped}");
    }
    out
}

fn update(out: &mut String, stream: &mut Stream, titles: &mut HashMap<String, String>, u: &SessionUpdate) {
    match u {
        SessionUpdate::AgentMessageChunk(c) => chunk(out, stream, Stream::Agent, &c.content),
        SessionUpdate::AgentThoughtChunk(c) => chunk(out, stream, Stream::Thought, &c.content),
        SessionUpdate::ToolCall(call) => {
            end_stream(out, stream);
            titles.insert(call.tool_call_id.to_string(), call.title.clone());
            let _ = writeln!(out, "⏺ {} [{}]", call.title, serde_name(&call.kind));
            tool_end(out, call.status, &call.content);
        }
        SessionUpdate::ToolCallUpdate(up) => {
            let Some(status) = up.fields.status else {
                return;
            };
            if !matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed) {
                return;
            }
            end_stream(out, stream);
            let id = up.tool_call_id.to_string();
            let title = up
                .fields
                .title
                .clone()
                .or_else(|| titles.get(&id).cloned())
                .unwrap_or(id);
            let _ = writeln!(out, "⏺ {title}");
            tool_end(out, status, up.fields.content.as_deref().unwrap_or_default());
        }
        SessionUpdate::Plan(plan) => {
            end_stream(out, stream);
            let _ = writeln!(out, "plan:");
            for entry in &plan.entries {
                let mark = match entry.status {
                    PlanEntryStatus::Completed => "[x]",
                    PlanEntryStatus::InProgress => "[~]",
                    _ => "[ ]",
                };
                let _ = writeln!(out, "  {mark} {}", entry.content);
            }
        }
        SessionUpdate::Notice(n) => {
            end_stream(out, stream);
            let _ = writeln!(out, "! {}", n.title);
        }
        _ => {}
    }
}

fn chunk(out: &mut String, stream: &mut Stream, kind: Stream, content: &ContentBlock) {
    if *stream != kind {
        end_stream(out, stream);
        if kind == Stream::Thought {
            out.push_str("(thinking) ");
        }
        *stream = kind;
    }
    out.push_str(&block_text(content));
}

fn end_stream(out: &mut String, stream: &mut Stream) {
    if *stream != Stream::None && !out.ends_with('\n') {
        out.push('\n');
    }
    *stream = Stream::None;
}

/// A finished tool call's status and the end of its output.
fn tool_end(out: &mut String, status: ToolCallStatus, content: &[ToolCallContent]) {
    if !matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed) {
        return;
    }
    for item in content {
        match item {
            ToolCallContent::Content(c) => {
                let text = block_text(&c.content);
                let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("```")).collect();
                let skip = lines.len().saturating_sub(OUTPUT_LINES);
                if skip > 0 {
                    let _ = writeln!(out, "  │ … {skip} more lines");
                }
                for line in &lines[skip..] {
                    let _ = writeln!(out, "  │ {line}");
                }
            }
            ToolCallContent::Diff(d) => {
                let _ = writeln!(out, "  │ edited {}", d.path.display());
            }
            _ => {}
        }
    }
    let _ = writeln!(out, "  └ {}", serde_name(&status));
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::ResourceLink(l) => format!("[{}]({})", l.name, l.uri),
        ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
        ContentBlock::Resource(_) => "[embedded resource]".into(),
        _ => "[content]".into(),
    }
}

/// An enum's wire name (`in_progress`, `execute`).
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "other".into(),
    }
}
