//! Streamed text: agent message and reasoning summary deltas become chunks as they arrive, and
//! the completed item adds only what the deltas did not already show.

use agent_client_protocol::v1::schema::{Meta, SessionUpdate};

use crate::render::emit;

/// Which ACP chunk a stream becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `agent_message_chunk`.
    Message,
    /// `agent_thought_chunk`.
    Thought,
}

/// The last chunk sent, so a new message directly after another of the same kind starts on a
/// paragraph of its own (for clients that ignore `messageId`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Last {
    Nothing,
    Chunk(Kind, String),
    Other,
}

/// One item's text shown so far: its length and a digest, never the text itself, so a
/// message of any length costs nothing to keep.
#[derive(Debug)]
struct Stream {
    message_id: String,
    /// What was sent for the item, paragraph breaks between summary parts included (the
    /// separator before the item is not part of it).
    shown: Shown,
    /// The reasoning summary part being streamed.
    part: u64,
    /// What each chunk of the item carries in `_meta` (an AIR client's message `phase`).
    meta: Option<Meta>,
}

/// The length and FNV-1a digest of a text sent in pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    len: usize,
    digest: u64,
}

impl Shown {
    const EMPTY: Shown = Shown {
        len: 0,
        digest: 0xcbf2_9ce4_8422_2325,
    };

    fn push_str(&mut self, text: &str) {
        for byte in text.bytes() {
            self.digest = (self.digest ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.len += text.len();
    }

    fn is_empty(self) -> bool {
        self.len == 0
    }

    /// What `text` has after the part already shown, if it starts with exactly that part.
    fn rest_of(self, text: &str) -> Option<&str> {
        let head = text.get(..self.len)?;
        let mut again = Shown::EMPTY;
        again.push_str(head);
        (again == self).then(|| &text[self.len..])
    }
}

/// The text streams of one turn.
#[derive(Debug)]
pub(super) struct Streams {
    open: Vec<Stream>,
    last: Last,
}

impl Streams {
    pub(super) fn new() -> Self {
        Self {
            open: Vec::new(),
            last: Last::Nothing,
        }
    }

    /// A delta of the item `message_id` (the prefixed item id).
    pub(super) fn delta(&mut self, kind: Kind, message_id: &str, delta: &str, out: &mut Vec<SessionUpdate>) {
        if delta.is_empty() {
            return;
        }
        let index = self.stream(message_id);
        self.open[index].shown.push_str(delta);
        self.send(kind, index, delta.to_owned(), out);
    }

    /// `item/reasoning/summaryPartAdded`: a part after the first starts a new paragraph.
    pub(super) fn part_added(&mut self, message_id: &str, part: u64, out: &mut Vec<SessionUpdate>) {
        let index = self.stream(message_id);
        let stream = &mut self.open[index];
        if part <= stream.part {
            return;
        }
        stream.part = part;
        if !stream.shown.is_empty() {
            stream.shown.push_str("\n\n");
            self.send(Kind::Thought, index, "\n\n".to_owned(), out);
        }
    }

    /// The item completed with `text`: sends what the deltas left out (all of it when none
    /// came), and nothing when the deltas showed it all.
    pub(super) fn completed(
        &mut self,
        kind: Kind,
        message_id: &str,
        text: &str,
        out: &mut Vec<SessionUpdate>,
    ) {
        let index = self.stream(message_id);
        let rest = if let Some(rest) = self.open[index].shown.rest_of(text) {
            rest.to_owned()
        } else {
            // The deltas said something else than the final text: showing the final text again
            // would repeat most of it, so the streamed version stands.
            tracing::debug!(
                message_id,
                "completed text differs from its deltas; not sent again"
            );
            String::new()
        };
        if !rest.is_empty() {
            self.send(kind, index, rest, out);
        }
        self.open.remove(index);
    }

    /// Each chunk of item `message_id` from now on carries `meta`.
    pub(super) fn meta(&mut self, message_id: &str, meta: Meta) {
        let index = self.stream(message_id);
        self.open[index].meta = Some(meta);
    }

    /// Something else than a chunk was sent (a tool call, a plan).
    pub(super) fn other_sent(&mut self) {
        self.last = Last::Other;
    }

    fn stream(&mut self, message_id: &str) -> usize {
        if let Some(index) = self.open.iter().position(|s| s.message_id == message_id) {
            return index;
        }
        self.open.push(Stream {
            message_id: message_id.to_owned(),
            shown: Shown::EMPTY,
            part: 0,
            meta: None,
        });
        self.open.len() - 1
    }

    fn send(&mut self, kind: Kind, index: usize, mut text: String, out: &mut Vec<SessionUpdate>) {
        let message_id = self.open[index].message_id.clone();
        if let Last::Chunk(last_kind, last_id) = &self.last
            && *last_kind == kind
            && *last_id != message_id
        {
            text.insert_str(0, "\n\n");
        }
        match kind {
            Kind::Message => emit::agent_text(out, text, message_id.clone()),
            Kind::Thought => emit::thought(out, text, message_id.clone()),
        }
        if let Some(meta) = &self.open[index].meta
            && let Some(SessionUpdate::AgentMessageChunk(chunk) | SessionUpdate::AgentThoughtChunk(chunk)) =
                out.last_mut()
        {
            chunk.meta = Some(meta.clone());
        }
        self.last = Last::Chunk(kind, message_id);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn shown_text_is_recognised_by_its_digest_not_kept() {
        let mut shown = Shown::EMPTY;
        shown.push_str("Hello, ");
        shown.push_str("wor");
        assert_eq!(shown.rest_of("Hello, world"), Some("ld"));
        assert_eq!(shown.rest_of("Hello, wor"), Some(""));
        assert_eq!(shown.rest_of("Hellx, world"), None, "a different text");
        assert_eq!(shown.rest_of("Hello"), None, "shorter than what was shown");
        assert_eq!(Shown::EMPTY.rest_of("all"), Some("all"));
        assert_eq!(std::mem::size_of::<Shown>(), 16);
    }

    fn texts(out: &[SessionUpdate]) -> Vec<(String, String)> {
        out.iter()
            .map(|u| {
                let v = serde_json::to_value(u).unwrap();
                let text = v["content"]["text"].as_str().unwrap().to_owned();
                (v["sessionUpdate"].as_str().unwrap().to_owned(), text)
            })
            .collect()
    }

    fn only_text(out: &[SessionUpdate]) -> String {
        texts(out).into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn deltas_are_not_repeated_at_completion() {
        let mut s = Streams::new();
        let mut out = Vec::new();
        s.delta(Kind::Message, "m1", "Hello ", &mut out);
        s.delta(Kind::Message, "m1", "world", &mut out);
        s.completed(Kind::Message, "m1", "Hello world", &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(only_text(&out), "Hello world");
    }

    #[test]
    fn completion_sends_only_the_missing_suffix() {
        let mut s = Streams::new();
        let mut out = Vec::new();
        s.delta(Kind::Message, "m1", "Hello ", &mut out);
        s.completed(Kind::Message, "m1", "Hello world", &mut out);
        assert_eq!(only_text(&out), "Hello world");
        assert_eq!(texts(&out)[1].1, "world");
    }

    #[test]
    fn completion_without_deltas_sends_everything_and_a_differing_one_nothing() {
        let mut s = Streams::new();
        let mut out = Vec::new();
        s.completed(Kind::Thought, "r1", "Thinking.", &mut out);
        assert_eq!(texts(&out), [("agent_thought_chunk".into(), "Thinking.".into())]);
        out.clear();
        s.delta(Kind::Message, "m2", "Hi there", &mut out);
        s.completed(Kind::Message, "m2", "Something else", &mut out);
        assert_eq!(only_text(&out), "Hi there");
    }

    #[test]
    fn summary_parts_are_paragraphs_and_match_the_joined_summary() {
        let mut s = Streams::new();
        let mut out = Vec::new();
        s.part_added("r1", 0, &mut out);
        s.delta(Kind::Thought, "r1", "One.", &mut out);
        s.part_added("r1", 1, &mut out);
        s.part_added("r1", 1, &mut out);
        s.delta(Kind::Thought, "r1", "Two.", &mut out);
        s.completed(Kind::Thought, "r1", &["One.", "Two."].join("\n\n"), &mut out);
        assert_eq!(only_text(&out), "One.\n\nTwo.");
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn a_new_message_after_another_starts_a_paragraph() {
        let mut s = Streams::new();
        let mut out = Vec::new();
        s.delta(Kind::Message, "m1", "First.", &mut out);
        s.completed(Kind::Message, "m1", "First.", &mut out);
        s.delta(Kind::Message, "m2", "Second.", &mut out);
        s.delta(Kind::Thought, "r1", "Hmm.", &mut out);
        s.other_sent();
        s.delta(Kind::Message, "m3", "Third.", &mut out);
        assert_eq!(
            texts(&out).into_iter().map(|(_, t)| t).collect::<Vec<_>>(),
            ["First.", "\n\nSecond.", "Hmm.", "Third."]
        );
        let ids: Vec<Value> = out
            .iter()
            .map(|u| serde_json::to_value(u).unwrap()["messageId"].clone())
            .collect();
        assert_eq!(ids, ["m1", "m2", "r1", "m3"]);
    }
}
