//! Bounding and fencing of tool output text before it is shown to the user.
//!
//! Codex reports a command's whole output in one string (`aggregated_output`), which can be
//! many megabytes. Editors render tool call content eagerly, so the decoder keeps the head and
//! the tail of long output and says, in the text itself, how much was left out.

use std::borrow::Cow;

/// Default bound for one tool call's output, in bytes.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Returns `text` if it fits in `max_bytes`, else its head and tail around a visible marker.
///
/// The head and tail each get half of the budget (cut on UTF-8 boundaries); the marker names the
/// number of bytes omitted, so the user knows the output was shortened and by how much.
pub fn bounded(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let head_end = head_cut(text, max_bytes);
    let tail_start = tail_cut(text, text.len() - (max_bytes - max_bytes / 2));
    let omitted = tail_start - head_end;
    Cow::Owned(joined(&text[..head_end], &text[tail_start..], omitted))
}

/// Where the kept head of a too long `text` ends: half the budget, cut on a UTF-8 boundary and,
/// when a line ends within it, after that line, so no partial line shows.
fn head_cut(text: &str, max_bytes: usize) -> usize {
    let head_end = floor_boundary(text, max_bytes / 2);
    text[..head_end].rfind('\n').map_or(head_end, |nl| nl + 1)
}

/// Where the kept tail of `text` starts, given the first byte the budget allows: on a UTF-8
/// boundary and, when a line ends after it (not at the very end), after that line.
pub(crate) fn tail_cut(text: &str, from: usize) -> usize {
    let tail_start = ceil_boundary(text, from);
    match text[tail_start..].find('\n') {
        Some(nl) if tail_start + nl + 1 < text.len() => tail_start + nl + 1,
        _ => tail_start,
    }
}

/// `head`, the marker naming `omitted` bytes, and `tail`, each on lines of their own.
fn joined(head: &str, tail: &str, omitted: usize) -> String {
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(head);
    if !head.ends_with('\n') && !head.is_empty() {
        out.push('\n');
    }
    out.push_str(&truncation_marker(omitted));
    out.push('\n');
    out.push_str(tail);
    out
}

/// Output that arrives in pieces (a running command's), kept within about twice the bound:
/// the head as it came and a sliding tail, so it always renders exactly as [`bounded`] would
/// render the whole text, whatever its size.
#[derive(Debug, Clone)]
pub struct StreamedOutput {
    max_bytes: usize,
    /// The first bytes, at least `max_bytes / 2 + 1` once that many came (whole characters).
    head: String,
    /// What came after `head`, without its first `dropped` bytes.
    tail: String,
    dropped: usize,
}

impl StreamedOutput {
    /// Empty output, to be shown within `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            head: String::new(),
            tail: String::new(),
            dropped: 0,
        }
    }

    /// Appends the next piece.
    pub fn push(&mut self, mut piece: &str) {
        let head_size = self.max_bytes / 2 + 1;
        if self.head.len() < head_size && self.tail.is_empty() {
            let take = ceil_boundary(piece, (head_size - self.head.len()).min(piece.len()));
            self.head.push_str(&piece[..take]);
            piece = &piece[take..];
        }
        self.tail.push_str(piece);
        // The tail keeps what `bounded` can show plus a few bytes for its boundary and line
        // adjustments; dropping the front only once it doubled keeps appends amortised O(1).
        let keep = self.max_bytes - self.max_bytes / 2 + 4;
        if self.tail.len() > 2 * keep + 64 {
            let cut = ceil_boundary(&self.tail, self.tail.len() - keep);
            self.tail.drain(..cut);
            self.dropped += cut;
        }
    }

    /// The bound it is shown within, in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Whether nothing (or only empty pieces) came.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// Bytes received in all.
    pub fn len(&self) -> usize {
        self.head.len() + self.dropped + self.tail.len()
    }

    /// The output so far, bounded and fenced, as [`fenced_bounded`] shows the whole text.
    pub fn fenced(&self) -> String {
        if self.dropped == 0 {
            let mut all = String::with_capacity(self.head.len() + self.tail.len());
            all.push_str(&self.head);
            all.push_str(&self.tail);
            return fenced_bounded_owned(all, self.max_bytes);
        }
        let head_end = head_cut(&self.head, self.max_bytes);
        let tail_start = tail_cut(
            &self.tail,
            self.tail.len() - (self.max_bytes - self.max_bytes / 2),
        );
        let omitted = self.len() - head_end - (self.tail.len() - tail_start);
        fenced(&joined(&self.head[..head_end], &self.tail[tail_start..], omitted))
    }
}

/// The line inserted where output was cut.
pub fn truncation_marker(omitted_bytes: usize) -> String {
    format!("[… {omitted_bytes} bytes of output omitted …]")
}

/// Wraps `text` in a fenced Markdown code block whose fence no line of `text` can close.
pub fn fenced(text: &str) -> String {
    let fence = "`".repeat(longest_backtick_run(text).max(2) + 1);
    let mut out = String::with_capacity(text.len() + 2 * fence.len() + 2);
    out.push_str(&fence);
    out.push('\n');
    out.push_str(text);
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out
}

/// Bounds `text` to `max_bytes` and fences it, the form in which command output is shown.
pub fn fenced_bounded(text: &str, max_bytes: usize) -> String {
    fenced(&bounded(text, max_bytes))
}

/// Like [`fenced_bounded`], reusing the allocation of `text` when it fits the bound.
pub fn fenced_bounded_owned(mut text: String, max_bytes: usize) -> String {
    if text.len() > max_bytes {
        return fenced_bounded(&text, max_bytes);
    }
    let fence = "`".repeat(longest_backtick_run(&text).max(2) + 1);
    let newline = !text.ends_with('\n');
    text.reserve_exact(2 * fence.len() + 2);
    text.insert(0, '\n');
    text.insert_str(0, &fence);
    if newline {
        text.push('\n');
    }
    text.push_str(&fence);
    text
}

/// Bounds a plain (unfenced) text, such as an MCP result block.
pub fn bounded_string(text: String, max_bytes: usize) -> String {
    match bounded(&text, max_bytes) {
        Cow::Borrowed(_) => text,
        Cow::Owned(shortened) => shortened,
    }
}

fn longest_backtick_run(text: &str) -> usize {
    // `contains(char)` is a vectorised byte search; most output has no backtick at all.
    if !text.contains('`') {
        return 0;
    }
    let mut longest = 0;
    let mut run = 0;
    for b in text.bytes() {
        if b == b'`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

pub(crate) fn floor_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

pub(crate) fn ceil_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_borrowed() {
        assert!(matches!(bounded("hello", 10), Cow::Borrowed("hello")));
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_marker() {
        let text = format!("{}{}", "a".repeat(100), "z".repeat(100));
        let out = bounded(&text, 20);
        assert_eq!(out, format!("aaaaaaaaaa\n{}\nzzzzzzzzzz", truncation_marker(180)));
    }

    #[test]
    fn cuts_on_char_boundaries() {
        let text = "é".repeat(50); // 100 bytes, 2 per char
        // 5 bytes of head round down to 4, 6 bytes of tail stay 6.
        assert_eq!(bounded(&text, 11), format!("éé\n{}\nééé", truncation_marker(90)));
    }

    #[test]
    fn fence_is_longer_than_any_backtick_run() {
        assert_eq!(fenced("ls"), "```\nls\n```");
        assert_eq!(fenced("a ```` b\n"), "`````\na ```` b\n`````");
    }

    #[test]
    fn owned_and_borrowed_fencing_agree() {
        for text in ["", "ls", "a\n", "x ``` y", &"z".repeat(50)] {
            assert_eq!(
                fenced_bounded_owned(text.to_owned(), 20),
                fenced_bounded(text, 20),
                "{text}"
            );
        }
    }

    /// A small deterministic generator, so the test needs no crate and fails reproducibly.
    fn next(seed: &mut u64) -> usize {
        *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        usize::try_from(*seed >> 33).unwrap()
    }

    #[test]
    fn streamed_output_renders_as_the_whole_text_would() {
        let mut seed = 7;
        let alphabet = ["a", "bb", "\n", "é", "日本", "`", "\n\n", "xyz "];
        for round in 0..300 {
            let max = [1, 2, 7, 16, 33, 100][round % 6];
            let len = next(&mut seed) % 400;
            let text: String = (0..len)
                .map(|_| alphabet[next(&mut seed) % alphabet.len()])
                .collect();
            let mut streamed = StreamedOutput::new(max);
            let mut at = 0;
            while at < text.len() {
                let mut end = (at + 1 + next(&mut seed) % 40).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                streamed.push(&text[at..end]);
                at = end;
            }
            assert_eq!(streamed.len(), text.len());
            assert_eq!(streamed.is_empty(), text.is_empty());
            assert_eq!(
                streamed.fenced(),
                fenced_bounded(&text, max),
                "round {round}, max {max}: {text:?}"
            );
        }
    }

    #[test]
    fn streamed_output_stays_small() {
        let mut streamed = StreamedOutput::new(1000);
        for _ in 0..100_000 {
            streamed.push("0123456789abcdef\n");
        }
        assert!(streamed.head.len() + streamed.tail.len() < 3000);
        assert!(streamed.fenced().contains("bytes of output omitted"));
    }

    #[test]
    fn bounded_string_keeps_short_text() {
        assert_eq!(bounded_string("abc".into(), 3), "abc");
        assert!(bounded_string("abcdef".into(), 2).contains("4 bytes"));
    }
}
