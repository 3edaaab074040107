//! A bounded tail of a child's stderr, kept for error messages.

use std::collections::VecDeque;

/// The last lines of a stream, at most `max_bytes` in total.
#[derive(Debug)]
pub struct StderrTail {
    lines: VecDeque<String>,
    bytes: usize,
    max_bytes: usize,
}

impl StderrTail {
    /// An empty tail holding at most `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            lines: VecDeque::new(),
            bytes: 0,
            max_bytes,
        }
    }

    /// Adds a line, dropping the oldest ones beyond the limit; a single line is cut to fit
    /// (with its newline), so the newest line is always kept.
    pub fn push(&mut self, line: &str) {
        let mut line = line.to_owned();
        if line.len() >= self.max_bytes {
            let mut cut = self.max_bytes.saturating_sub(1);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > self.max_bytes {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len() + 1,
                None => break,
            }
        }
    }

    /// The kept lines joined with newlines.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(self.bytes);
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_bytes() {
        let mut t = StderrTail::new(10);
        for l in ["aaaa", "bbbb", "cccc"] {
            t.push(l);
        }
        assert_eq!(t.text(), "bbbb\ncccc\n");
    }

    #[test]
    fn a_huge_line_is_cut_on_a_char_boundary() {
        let mut t = StderrTail::new(5);
        t.push("ééééé");
        assert_eq!(t.text(), "éé\n");
        t.push(&"x".repeat(100));
        assert_eq!(t.text(), "xxxx\n", "a line longer than the tail replaces it, cut");
    }
}
