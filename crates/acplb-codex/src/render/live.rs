//! A running command's output on its way to the client (ADR 0033): appended to Zed's
//! display-only terminal where the client asked for terminals (`_meta.terminal_output`), else
//! text content that each update replaces, sent coalesced so that long output is not re-sent
//! for every piece.
//!
//! A terminal gets the `terminal_info` / `terminal_output` / `terminal_exit` `_meta` of the
//! tool call and its updates, the convention Zed renders and `codex-acp` sends; acplb never
//! calls the client's `terminal/*` methods. Its data is bounded like text output: the first
//! `max_output_bytes` live, then, when the command ends, the truncation marker and the last
//! half of the bound.

use std::path::Path;

use agent_client_protocol::v1::schema::{
    Meta, SessionUpdate, Terminal, ToolCall, ToolCallContent, ToolCallId, ToolCallUpdate,
    ToolCallUpdateFields,
};
use serde_json::{Value, json};

use super::DecoderOptions;
use crate::output::{StreamedOutput, ceil_boundary, floor_boundary, tail_cut, truncation_marker};

/// The escape that resets a terminal (RIS): screen, scrollback, colours and modes.
const RESET: &str = "\u{1b}c";

/// The output of one running command, as the client sees it.
#[derive(Debug, Clone)]
pub(crate) enum LiveOutput {
    /// Text content: each update carries the whole bounded output so far.
    Text(TextStream),
    /// Zed's terminal: each update carries only the new bytes.
    Terminal(TerminalStream),
}

impl LiveOutput {
    /// Nothing printed yet, by the tool call `id`.
    pub(crate) fn new(id: &ToolCallId, opts: &DecoderOptions) -> Self {
        if opts.terminal {
            Self::Terminal(TerminalStream::new(id, opts.max_output_bytes))
        } else {
            Self::Text(TextStream {
                output: StreamedOutput::new(opts.max_output_bytes),
                shown: 0,
            })
        }
    }

    /// Takes the next piece Codex streamed; pushes the update to send now, if one is due.
    pub(crate) fn push(&mut self, id: &ToolCallId, piece: &str, out: &mut Vec<SessionUpdate>) {
        match self {
            Self::Text(text) => {
                if let Some(fields) = text.push(piece) {
                    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        id.clone(),
                        fields,
                    )));
                }
            }
            Self::Terminal(terminal) => {
                if let Some(data) = terminal.push(piece) {
                    let meta = terminal.output_meta(&data);
                    let update = ToolCallUpdate::new(id.clone(), ToolCallUpdateFields::new()).meta(meta);
                    out.push(SessionUpdate::ToolCallUpdate(update));
                }
            }
        }
    }

    /// The terminal, when the output goes to one.
    pub(crate) fn terminal(&mut self) -> Option<&mut TerminalStream> {
        match self {
            Self::Text(_) => None,
            Self::Terminal(terminal) => Some(terminal),
        }
    }

    /// The text output streamed so far (`None` for a terminal).
    pub(crate) fn text(&self) -> Option<&StreamedOutput> {
        match self {
            Self::Text(text) => Some(&text.output),
            Self::Terminal(_) => None,
        }
    }
}

/// Text content of a running command, sent coalesced: the first output at once, then whenever
/// the output grew by as much as was last shown (at most a quarter of the bound), so the bytes
/// sent stay within a few times the output's size instead of growing with its square.
#[derive(Debug, Clone)]
pub(crate) struct TextStream {
    output: StreamedOutput,
    /// Bytes of output when the last update was sent.
    shown: usize,
}

impl TextStream {
    fn push(&mut self, piece: &str) -> Option<ToolCallUpdateFields> {
        self.output.push(piece);
        let len = self.output.len();
        let step = self.shown.clamp(1, (self.output.max_bytes() / 4).max(1));
        if len == self.shown || (self.shown > 0 && len < self.shown + step) {
            return None;
        }
        self.shown = len;
        Some(ToolCallUpdateFields::new().content(vec![self.output.fenced().into()]))
    }
}

/// A command's output appended to Zed's terminal: the first `max` bytes as they come, the
/// rest held back (only its last `max / 2` bytes) until the command ends.
#[derive(Debug, Clone)]
pub(crate) struct TerminalStream {
    id: String,
    max: usize,
    /// Bytes sent as they came.
    sent: usize,
    /// What was sent as it came (the first `max` bytes at most), to check it against the
    /// output Codex reports at the end.
    sent_text: String,
    /// Whether what was sent ends a line (or nothing was sent).
    sent_line_end: bool,
    /// Bytes received in all.
    total: usize,
    /// The latest bytes not sent, a window of at least `max / 2` of them.
    held: String,
}

impl TerminalStream {
    fn new(id: &ToolCallId, max: usize) -> Self {
        Self {
            id: id.0.to_string(),
            max,
            sent: 0,
            sent_text: String::new(),
            sent_line_end: true,
            total: 0,
            held: String::new(),
        }
    }

    /// The part of `piece` to send now (within the bound), if any; the rest is held.
    pub(crate) fn push(&mut self, piece: &str) -> Option<String> {
        self.total += piece.len();
        let mut now = "";
        let mut rest = piece;
        if self.held.is_empty() && self.sent < self.max {
            let take = floor_boundary(piece, (self.max - self.sent).min(piece.len()));
            (now, rest) = piece.split_at(take);
        }
        if !rest.is_empty() {
            self.held.push_str(rest);
            let keep = self.max / 2 + 4;
            // Dropping the front only once the window doubled keeps appends amortised O(1).
            if self.held.len() > 2 * keep + 64 {
                let cut = ceil_boundary(&self.held, self.held.len() - keep);
                self.held.drain(..cut);
            }
        }
        if now.is_empty() {
            return None;
        }
        self.sent += now.len();
        self.sent_text.push_str(now);
        self.sent_line_end = now.ends_with('\n');
        Some(now.to_owned())
    }

    /// What was held back, to send as the command ends: all of it when it fits half the bound,
    /// else the truncation marker (naming the bytes left out) and the last half of the bound.
    pub(crate) fn rest(&mut self) -> Option<String> {
        let held_back = self.total - self.sent;
        if held_back == 0 {
            return None;
        }
        let budget = self.max / 2;
        let held = std::mem::take(&mut self.held);
        self.sent = self.total;
        if held_back <= budget {
            return Some(held);
        }
        let start = tail_cut(&held, held.len().saturating_sub(budget));
        let tail = &held[start..];
        let omitted = held_back - tail.len();
        let newline = if self.sent_line_end { "" } else { "\n" };
        Some(format!("{newline}{}\n{tail}", truncation_marker(omitted)))
    }

    /// Whether what came as it streamed is `whole`, the output Codex reports at the end.
    fn streamed(&self, whole: &str) -> bool {
        whole.len() == self.total && whole.starts_with(&self.sent_text) && whole.ends_with(self.held.as_str())
    }

    /// `_meta` appending `data` to the terminal.
    pub(crate) fn output_meta(&self, data: &str) -> Meta {
        let mut meta = Meta::new();
        meta.insert(
            "terminal_output".into(),
            json!({ "terminal_id": self.id, "data": data }),
        );
        meta
    }

    /// The update ending the terminal's call `id`: `whole` output when none streamed (exec, or
    /// a command Codex did not stream), what was held back, the exit (`exit_code` `None` for a
    /// command that did not exit by itself, e.g. one stopped by a cancel), and `fields`
    /// (status, raw output, notes) with the terminal kept first in the content.
    pub(crate) fn finish(
        &mut self,
        id: &ToolCallId,
        whole: Option<&str>,
        exit_code: Option<i64>,
        fields: ToolCallUpdateFields,
    ) -> ToolCallUpdate {
        let mut data = String::new();
        match whole {
            Some(whole) if self.total == 0 => data = self.push(whole).unwrap_or_default(),
            Some(whole) if !self.streamed(whole) => {
                // Codex did not stream all of it (0.169 never streams what a command printed
                // before its `item/started`): the terminal is reset and shown the output as
                // Codex reports it.
                *self = Self::new(id, self.max);
                data = format!("{RESET}{}", self.push(whole).unwrap_or_default());
            }
            _ => {}
        }
        data.push_str(&self.rest().unwrap_or_default());
        let mut meta = if data.is_empty() {
            Meta::new()
        } else {
            self.output_meta(&data)
        };
        meta.insert(
            "terminal_exit".into(),
            json!({ "terminal_id": self.id, "exit_code": exit_code, "signal": Value::Null }),
        );
        let mut content = vec![ToolCallContent::Terminal(Terminal::new(self.id.clone()))];
        let shown = fields.content.clone().unwrap_or_default();
        content.extend(
            shown
                .into_iter()
                .filter(|c| !matches!(c, ToolCallContent::Terminal(_))),
        );
        ToolCallUpdate::new(id.clone(), fields.content(content)).meta(meta)
    }
}

/// `call` (a command just started) shown as a terminal: its content embeds the terminal whose
/// id is the call's, which `terminal_info` creates in the client.
pub(crate) fn open_terminal(call: ToolCall, cwd: &Path) -> ToolCall {
    let id = call.tool_call_id.0.to_string();
    let mut meta = Meta::new();
    meta.insert(
        "terminal_info".into(),
        json!({ "terminal_id": id, "cwd": cwd.display().to_string() }),
    );
    let mut content = vec![ToolCallContent::Terminal(Terminal::new(id))];
    content.extend(call.content.iter().cloned());
    call.content(content).meta(meta)
}

/// The update ending the terminal of a command that was stopped (a cancel, a crash) before
/// Codex reported its end: `fields` (status, the reason) and an exit without a code.
pub(crate) fn ended_terminal(id: &ToolCallId, fields: ToolCallUpdateFields) -> ToolCallUpdate {
    TerminalStream::new(id, 0).finish(id, None, None, fields)
}

/// A finished command whose whole output came at once (exec), on a client with terminals:
/// its terminal opened first if the call was never shown started (`open_id` `None`), then
/// finished with that output bounded as a stream would be, and its exit.
pub(crate) fn finished_terminal(
    open_id: Option<ToolCallId>,
    call: impl FnOnce() -> ToolCall,
    output: &str,
    exit_code: Option<i64>,
    fields: ToolCallUpdateFields,
    opts: &DecoderOptions,
    out: &mut Vec<SessionUpdate>,
) {
    let id = open_id.unwrap_or_else(|| {
        let call = open_terminal(call(), &opts.cwd);
        let id = call.tool_call_id.clone();
        out.push(SessionUpdate::ToolCall(call));
        id
    });
    let update = TerminalStream::new(&id, opts.max_output_bytes).finish(&id, Some(output), exit_code, fields);
    out.push(SessionUpdate::ToolCallUpdate(update));
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    fn stream(max: usize) -> TerminalStream {
        TerminalStream::new(&ToolCallId::new("t1-c1"), max)
    }

    #[test]
    fn terminal_sends_only_new_bytes_within_the_bound() {
        let mut t = stream(100);
        assert_eq!(t.push("hello\n").as_deref(), Some("hello\n"));
        assert_eq!(t.push("").as_deref(), None);
        assert_eq!(t.push("world\n").as_deref(), Some("world\n"));
        assert_eq!(t.rest(), None);
    }

    #[test]
    fn terminal_holds_what_passes_the_bound_and_ends_with_marker_and_tail() {
        let mut t = stream(20);
        let mut sent = String::new();
        for n in 0..100 {
            if let Some(data) = t.push(&format!("{n:03}\n")) {
                sent.push_str(&data);
            }
        }
        assert_eq!(sent, "000\n001\n002\n003\n004\n");
        let rest = t.rest().unwrap();
        assert_eq!(rest, format!("{}\n098\n099\n", truncation_marker(372)));
        assert_eq!(t.rest(), None, "the rest is sent once");
    }

    #[test]
    fn terminal_a_little_over_the_bound_sends_all_without_marker() {
        let mut t = stream(10);
        assert_eq!(t.push("0123456789abc").as_deref(), Some("0123456789"));
        assert_eq!(t.rest().as_deref(), Some("abc"));
    }

    #[test]
    fn terminal_is_reset_and_shown_codex_output_when_a_piece_never_came() {
        let id = ToolCallId::new("c");
        let mut t = stream(100);
        assert_eq!(t.push("second\n").as_deref(), Some("second\n"));
        let fields = ToolCallUpdateFields::new();
        let end = t.finish(&id, Some("first\nsecond\n"), Some(0), fields.clone());
        let end = serde_json::to_value(&end).unwrap();
        assert_eq!(end["_meta"]["terminal_output"]["data"], "\u{1b}cfirst\nsecond\n");
        // All of it came: nothing is sent again.
        let mut t = stream(100);
        t.push("first\n");
        t.push("second\n");
        let end = t.finish(&id, Some("first\nsecond\n"), Some(0), fields);
        let end = serde_json::to_value(&end).unwrap();
        assert!(end["_meta"].get("terminal_output").is_none(), "{end}");
    }

    #[test]
    fn terminal_cuts_on_characters() {
        let mut t = stream(5);
        assert_eq!(t.push("ééé").as_deref(), Some("éé"));
        assert_eq!(t.rest().as_deref(), Some("é"));
    }

    #[test]
    fn terminal_holds_a_small_window_of_huge_output() {
        let mut t = stream(1000);
        for _ in 0..100_000 {
            t.push("0123456789abcdef\n");
        }
        assert!(t.held.len() < 1300, "{}", t.held.len());
        assert!(t.rest().unwrap().contains("bytes of output omitted"));
    }

    #[test]
    fn text_is_coalesced_and_linear_in_the_output() {
        let mut text = TextStream {
            output: StreamedOutput::new(64 * 1024),
            shown: 0,
        };
        let (mut updates, mut bytes) = (0, 0);
        let line = "a line of output, about forty bytes long\n";
        for _ in 0..20_000 {
            if let Some(fields) = text.push(line) {
                updates += 1;
                bytes += serde_json::to_string(&fields).unwrap().len();
            }
        }
        let total = line.len() * 20_000;
        assert!(updates < 60, "{updates} updates");
        assert!(bytes < 5 * total, "{bytes} bytes sent for {total}");
    }

    #[test]
    fn finished_terminal_carries_bounded_output_and_exit() {
        let opts = DecoderOptions {
            max_output_bytes: 20,
            terminal: true,
            ..DecoderOptions::new("/w")
        };
        let id = ToolCallId::new("t1-c1");
        let mut output = String::new();
        for n in 0..100 {
            writeln!(output, "{n:03}").unwrap();
        }
        let mut out = Vec::new();
        let call = || ToolCall::new(id.clone(), "seq");
        finished_terminal(
            None,
            call,
            &output,
            Some(0),
            ToolCallUpdateFields::new(),
            &opts,
            &mut out,
        );
        let started = serde_json::to_value(&out[0]).unwrap();
        assert_eq!(started["content"][0]["terminalId"], "t1-c1");
        assert_eq!(started["_meta"]["terminal_info"]["cwd"], "/w");
        let v = serde_json::to_value(&out[1]).unwrap();
        let data = v["_meta"]["terminal_output"]["data"].as_str().unwrap();
        assert_eq!(
            data,
            format!("000\n001\n002\n003\n004\n{}\n098\n099\n", truncation_marker(372))
        );
        assert_eq!(v["_meta"]["terminal_exit"]["exit_code"], 0);
        assert_eq!(v["content"][0]["terminalId"], "t1-c1");
        let mut out = Vec::new();
        let fields = ToolCallUpdateFields::new();
        finished_terminal(Some(id.clone()), call, "", Some(1), fields, &opts, &mut out);
        assert_eq!(out.len(), 1, "a started call is not started again");
        let v = serde_json::to_value(&out[0]).unwrap();
        assert!(v["_meta"].get("terminal_output").is_none(), "{v}");
        assert_eq!(v["_meta"]["terminal_exit"]["exit_code"], 1);
    }
}
