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
    let mut head_end = floor_boundary(text, max_bytes / 2);
    let mut tail_start = ceil_boundary(text, text.len() - (max_bytes - max_bytes / 2));
    // Cut on line boundaries when a line ends within the budget, so no partial line shows.
    if let Some(nl) = text[..head_end].rfind('\n') {
        head_end = nl + 1;
    }
    if let Some(nl) = text[tail_start..].find('\n')
        && tail_start + nl + 1 < text.len()
    {
        tail_start += nl + 1;
    }
    let omitted = tail_start - head_end;
    let head = &text[..head_end];
    let tail = &text[tail_start..];
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(head);
    if !head.ends_with('\n') && !head.is_empty() {
        out.push('\n');
    }
    out.push_str(&truncation_marker(omitted));
    out.push('\n');
    out.push_str(tail);
    Cow::Owned(out)
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

fn floor_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
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

    #[test]
    fn bounded_string_keeps_short_text() {
        assert_eq!(bounded_string("abc".into(), 3), "abc");
        assert!(bounded_string("abcdef".into(), 2).contains("4 bytes"));
    }
}
