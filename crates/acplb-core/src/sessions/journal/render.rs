//! A history as readable text (`acplb sessions show`): each prompt, the agent's text and
//! thoughts joined as they streamed, tool calls with their kind, final status and the end of
//! their output, plans, and how each turn ended.

use agent_client_protocol::schema::MaybeUndefined;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use agent_client_protocol::v1::schema::{
    ContentBlock, PlanEntryStatus, SessionUpdate, ToolCallContent, ToolCallStatus,
};

use super::history::History;
use super::markdown_plan::{Change, MarkdownPlan};
use super::record::Record;

/// The most lines of one tool's output shown.
const OUTPUT_LINES: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Stream {
    #[default]
    None,
    Agent,
    Thought,
    /// A markdown plan (ADR 0053).
    Plan,
}

/// `history` as text, ending with a newline.
pub fn render(history: &History) -> String {
    let mut out = String::new();
    Renderer::header(&mut out, &history.session_id, &history.cwd, &history.started_at);
    let mut renderer = Renderer::new();
    for record in &history.records {
        renderer.record(&mut out, record);
    }
    renderer.finish(&mut out);
    for skipped in &history.skipped {
        let _ = writeln!(out, "! skipped {skipped}");
    }
    out
}

/// Renders a journal one record at a time, as [`render`] does for a whole history: what
/// `acplb sessions show --follow` prints while the journal grows.
///
/// It remembers what the text so far needs: whether a streamed message is still open (so the
/// next chunk continues its line) and each tool call's title (for its final update). Each call
/// may write to a fresh `out`: the renderer knows whether the last thing written ended a line.
#[derive(Debug, Default)]
pub struct Renderer {
    stream: Stream,
    titles: HashMap<String, String>,
    /// The markdown plan being streamed, for what each update adds to it.
    plan: MarkdownPlan,
    /// The last text written (in an earlier `out`) did not end with a newline.
    line_open: bool,
}

impl Renderer {
    /// A renderer at the start of a journal, after its header.
    pub fn new() -> Self {
        Self::default()
    }

    /// The header lines: session id, working directory, start time.
    pub fn header(out: &mut String, session_id: &str, cwd: &Path, started_at: &str) {
        let _ = writeln!(out, "session {session_id}");
        let _ = writeln!(out, "cwd     {}", cwd.display());
        let _ = writeln!(out, "started {started_at}");
    }

    /// Appends `record` as text to `out`; streamed text may stay on an open line.
    pub fn record(&mut self, out: &mut String, record: &Record) {
        self.render_record(out, record);
        self.line_open = out.chars().last().map_or(self.line_open, |c| c != '\n');
    }

    /// Ends a streamed message still open (a newline if its line is), as at the end of a
    /// journal or before a note that must start its own line.
    pub fn finish(&mut self, out: &mut String) {
        self.end_stream(out);
        self.line_open = out.chars().last().map_or(self.line_open, |c| c != '\n');
    }

    fn render_record(&mut self, out: &mut String, record: &Record) {
        match record {
            Record::Prompt {
                turn,
                at,
                prompt,
                steered,
            } => {
                self.end_stream(out);
                let how = if *steered { "steered into turn" } else { "turn" };
                let _ = writeln!(out, "\n── {how} {turn} · {at}");
                for block in prompt {
                    for line in block_text(block).lines() {
                        let _ = writeln!(out, "> {line}");
                    }
                }
            }
            Record::Update { u } => self.update(out, u),
            Record::TurnEnd {
                turn, stop, error, ..
            } => {
                self.end_stream(out);
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
                self.end_stream(out);
                let _ = writeln!(out, "· mode: {id}");
            }
            Record::Gap { limit } => {
                self.end_stream(out);
                let _ = writeln!(
                    out,
                    "· (the journal reached its limit of {limit} bytes; later updates were not kept)"
                );
            }
            Record::Lost { count, error, .. } => {
                self.end_stream(out);
                let _ = writeln!(
                    out,
                    "· ({count} record(s) could not be written to the journal here: {error})"
                );
            }
            Record::Open { .. }
            | Record::Reopened { .. }
            | Record::Thread { .. }
            | Record::Setting { .. } => {}
        }
    }

    fn update(&mut self, out: &mut String, u: &SessionUpdate) {
        // A subagent session's own updates are its, not this session's: its announcement shows.
        if crate::provider::route::of(u).is_some() {
            return;
        }
        if let SessionUpdate::SubagentUpdate(child) = u {
            if let MaybeUndefined::Value(title) = &child.title {
                self.end_stream(out);
                let _ = writeln!(out, "⏺ Subagent: {title} [session {}]", child.session_id);
            }
            return;
        }
        // A plan goes on where it stopped; one that something interrupted is shown again whole.
        match self.plan.apply(u) {
            Some(Change::Grew(more)) if self.stream == Stream::Plan => {
                out.push_str(more);
                return;
            }
            Some(_) => {
                let text = self.plan.text().to_owned();
                self.end_stream(out);
                let _ = writeln!(out, "plan:");
                out.push_str(&text);
                self.stream = Stream::Plan;
                return;
            }
            None => {}
        }
        match u {
            SessionUpdate::AgentMessageChunk(c) => self.chunk(out, Stream::Agent, &c.content),
            SessionUpdate::AgentThoughtChunk(c) => self.chunk(out, Stream::Thought, &c.content),
            SessionUpdate::ToolCall(call) => {
                self.end_stream(out);
                self.titles
                    .insert(call.tool_call_id.to_string(), call.title.clone());
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
                self.end_stream(out);
                let id = up.tool_call_id.to_string();
                let title = up
                    .fields
                    .title
                    .clone()
                    .or_else(|| self.titles.get(&id).cloned())
                    .unwrap_or(id);
                let _ = writeln!(out, "⏺ {title}");
                tool_end(out, status, up.fields.content.as_deref().unwrap_or_default());
            }
            SessionUpdate::Plan(plan) => {
                self.end_stream(out);
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
                self.end_stream(out);
                let _ = writeln!(out, "! {}", n.title);
            }
            _ => {}
        }
    }

    fn chunk(&mut self, out: &mut String, kind: Stream, content: &ContentBlock) {
        if self.stream != kind {
            self.end_stream(out);
            if kind == Stream::Thought {
                out.push_str("(thinking) ");
            }
            self.stream = kind;
        }
        out.push_str(&block_text(content));
    }

    fn end_stream(&mut self, out: &mut String) {
        let open = out.chars().last().map_or(self.line_open, |c| c != '\n');
        if self.stream != Stream::None && open {
            out.push('\n');
        }
        self.stream = Stream::None;
    }
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
